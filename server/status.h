/*
 * The body of the reply to the STATUS control op (docs/protocol.md,
 * "Status"): gvsd's version and settings, the host's GPUs, the
 * sessions of the shared table (stats.h), and the counts of refused
 * connections and ended sessions by reason (reasons.h), which every
 * viewer sees: they name nobody.
 */
#ifndef GVSD_STATUS_H
#define GVSD_STATUS_H

#include "gvs/buf.h"

/* Layout version of the STATUS reply body, its first field. */
#define GVSD_STATUS_FORMAT 2u

/* Encodes the reply into out (reset first).  An operator (viewer NULL)
 * sees every session; a tenant sees only its own: those of its token
 * ("token NAME"), or of its uid ("uid=U ..."), by the identity of the
 * asking session, viewer; a tcp peer without a token is nobody's tenant
 * and sees none.  Sessions that do not fit in out's maximum are counted
 * but not listed.  0 or GVS_E_NOMEM. */
int gvsd_status_encode(struct gvs_buf *out, const char *viewer);

#endif
