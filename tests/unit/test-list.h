/*
 * Every unit test, once: each entry declares test_<name> and
 * registers it.  Keep one section per module.
 */
#define TEST_LIST(TEST_ENTRY)                                                \
    /* core/err */                                                           \
    TEST_ENTRY(err_names)                                                    \
    /* core/mem */                                                           \
    TEST_ENTRY(mem_fail_after)                                               \
    /* core/buf */                                                           \
    TEST_ENTRY(buf_roundtrip)                                                \
    TEST_ENTRY(buf_truncation)                                               \
    TEST_ENTRY(buf_max)                                                      \
    TEST_ENTRY(buf_blob_lengths)                                             \
    TEST_ENTRY(buf_str)                                                      \
    TEST_ENTRY(buf_expect_end)                                               \
    TEST_ENTRY(buf_view_readonly)                                            \
    TEST_ENTRY(buf_reserve_unput_consume)                                    \
    TEST_ENTRY(buf_alloc_failure)                                            \
    /* core/uri */                                                           \
    TEST_ENTRY(uri_valid)                                                    \
    TEST_ENTRY(uri_invalid)                                                  \
    /* core/config */                                                        \
    TEST_ENTRY(config_defaults_and_keys)                                     \
    TEST_ENTRY(config_errors)                                                \
    TEST_ENTRY(config_load)                                                  \
    TEST_ENTRY(config_alloc_failure)                                         \
    /* core/proto */                                                         \
    TEST_ENTRY(proto_hdr)                                                    \
    TEST_ENTRY(proto_hash)                                                   \
    TEST_ENTRY(proto_hello_roundtrip)                                        \
    TEST_ENTRY(proto_hello_truncation)                                       \
    TEST_ENTRY(proto_hello_limits)                                           \
    TEST_ENTRY(proto_hello_bitflips)                                         \
    TEST_ENTRY(proto_frame_roundtrip)                                        \
    TEST_ENTRY(proto_frame_recv_errors)                                      \
    /* core/comm */                                                          \
    TEST_ENTRY(comm_unix_transfer)                                           \
    TEST_ENTRY(comm_tcp_transfer)                                            \
    TEST_ENTRY(comm_registry)                                                \
    TEST_ENTRY(comm_peer_and_uri)                                            \
    TEST_ENTRY(comm_recv_timeout)                                            \
    TEST_ENTRY(comm_connect_failures)                                        \
    TEST_ENTRY(comm_unix_socket_file)                                        \
    TEST_ENTRY(comm_no_sigpipe)                                              \
    TEST_ENTRY(comm_accept_interrupted)                                      \
    /* core/log */                                                           \
    TEST_ENTRY(log_levels)                                                   \
    TEST_ENTRY(log_format)                                                   \
    /* end */
