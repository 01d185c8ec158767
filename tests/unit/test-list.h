/*
 * Every unit test, once: each entry declares test_<name> and
 * registers it.  Keep one section per module.
 */
#define TEST_LIST(TEST_ENTRY)                                                \
    /* core/err */                                                           \
    TEST_ENTRY(err_names)                                                    \
    /* end */
