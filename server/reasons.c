#include "reasons.h"

static const char *const refusal_labels[] = {
#define GVSD_REASON_LABEL(name, label) label,
    GVSD_REFUSALS(GVSD_REASON_LABEL)
#undef GVSD_REASON_LABEL
};

static const char *const end_labels[] = {
#define GVSD_REASON_LABEL(name, label) label,
    GVSD_ENDS(GVSD_REASON_LABEL)
#undef GVSD_REASON_LABEL
};

const char *gvsd_refusal_label(enum gvsd_refusal r)
{
    return (unsigned)r < GVSD_REFUSALS_N ? refusal_labels[r] : "unknown";
}

const char *gvsd_end_label(enum gvsd_end e)
{
    return (unsigned)e < GVSD_ENDS_N ? end_labels[e] : "unknown";
}
