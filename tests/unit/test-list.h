/*
 * Every unit test, once.  TEST_ENTRY(name) declares test_name and
 * registers it.  Keep one section per module.
 */
#define TEST_LIST(TEST_ENTRY)                                                \
    /* core/err */                                                           \
    TEST_ENTRY(err_names)                                                    \
    /* end */
