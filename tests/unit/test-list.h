/*
 * Every unit test, once: each entry declares test_<name> and
 * registers it.  Keep one section per module.
 */
#define TEST_LIST(TEST_ENTRY)                                                \
    /* core/err */                                                           \
    TEST_ENTRY(err_names)                                                    \
    /* core/mem */                                                           \
    TEST_ENTRY(mem_fail_after)                                               \
    TEST_ENTRY(mem_farmap)                                                   \
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
    TEST_ENTRY(config_load_default)                                          \
    TEST_ENTRY(config_tcp_keys)                                              \
    TEST_ENTRY(config_ivshmem_keys)                                          \
    TEST_ENTRY(config_alloc_failure)                                         \
    TEST_ENTRY(config_access_keys)                                           \
    /* core/proto */                                                         \
    TEST_ENTRY(proto_hdr)                                                    \
    TEST_ENTRY(proto_hash)                                                   \
    TEST_ENTRY(proto_hello_roundtrip)                                        \
    TEST_ENTRY(proto_hello_truncation)                                       \
    TEST_ENTRY(proto_hello_limits)                                           \
    TEST_ENTRY(proto_hello_bitflips)                                         \
    TEST_ENTRY(proto_frame_roundtrip)                                        \
    TEST_ENTRY(proto_frames_sendv)                                           \
    TEST_ENTRY(proto_frame_recv_errors)                                      \
    TEST_ENTRY(proto_frame_split)                                            \
    /* core/comm */                                                          \
    TEST_ENTRY(comm_unix_transfer)                                           \
    TEST_ENTRY(comm_tcp_transfer)                                            \
    TEST_ENTRY(comm_registry)                                                \
    TEST_ENTRY(comm_peer_and_uri)                                            \
    TEST_ENTRY(comm_same_host)                                               \
    TEST_ENTRY(comm_recv_timeout)                                            \
    TEST_ENTRY(comm_connect_failures)                                        \
    TEST_ENTRY(comm_unix_socket_file)                                        \
    TEST_ENTRY(comm_listen_errors)                                           \
    TEST_ENTRY(comm_tcp_keepalive)                                           \
    TEST_ENTRY(comm_unanswered_window)                                       \
    TEST_ENTRY(comm_no_sigpipe)                                              \
    TEST_ENTRY(comm_accept_interrupted)                                      \
    TEST_ENTRY(comm_read_ahead)                                              \
    /* core/comm_tls */                                                      \
    TEST_ENTRY(tls_transfer)                                                 \
    TEST_ENTRY(tls_readable_pending)                                         \
    TEST_ENTRY(tls_readable_read_ahead)                                      \
    TEST_ENTRY(tls_corked_send_pushed)                                       \
    TEST_ENTRY(tls_shutdown_unblocks)                                        \
    TEST_ENTRY(tls_uri)                                                      \
    TEST_ENTRY(tls_untrusted_server)                                         \
    TEST_ENTRY(tls_host_name)                                                \
    TEST_ENTRY(tls_no_ca)                                                    \
    TEST_ENTRY(tls_mutual)                                                   \
    TEST_ENTRY(tls_plaintext_mismatch)                                       \
    TEST_ENTRY(tls_handshake_timeout)                                        \
    /* core/comm_shm */                                                      \
    TEST_ENTRY(shm_transfer)                                                 \
    TEST_ENTRY(shm_ping_pong)                                                \
    TEST_ENTRY(shm_concurrent)                                               \
    TEST_ENTRY(shm_peer_closed)                                              \
    TEST_ENTRY(shm_peer_killed)                                              \
    TEST_ENTRY(shm_idle_peer_killed)                                         \
    TEST_ENTRY(shm_recv_timeout)                                             \
    TEST_ENTRY(shm_bad_setup)                                                \
    TEST_ENTRY(shm_bad_counter)                                              \
    TEST_ENTRY(shm_ring_two_sleepers)                                        \
    TEST_ENTRY(shm_ring_room_wanted)                                         \
    TEST_ENTRY(shm_fd_pass)                                                  \
    TEST_ENTRY(shm_fd_timeout)                                               \
    TEST_ENTRY(shm_fd_hostile)                                               \
    /* core/comm_ivshmem */                                                  \
    TEST_ENTRY(ivshmem_transfer)                                             \
    TEST_ENTRY(ivshmem_ping_pong)                                            \
    TEST_ENTRY(ivshmem_peer_closed)                                          \
    TEST_ENTRY(ivshmem_exit_unclosed)                                        \
    TEST_ENTRY(ivshmem_peer_killed)                                          \
    TEST_ENTRY(ivshmem_slots)                                                \
    TEST_ENTRY(ivshmem_no_answer)                                            \
    TEST_ENTRY(ivshmem_poll_step)                                            \
    TEST_ENTRY(ivshmem_doze)                                                 \
    TEST_ENTRY(ivshmem_wait_late)                                            \
    TEST_ENTRY(ivshmem_area)                                                 \
    TEST_ENTRY(ivshmem_hostile)                                              \
    TEST_ENTRY(unix_fd_pass)                                                 \
    TEST_ENTRY(unix_plain_fd_pass)                                           \
    TEST_ENTRY(unix_fd_timeout)                                              \
    TEST_ENTRY(unix_setup_hostile)                                           \
    TEST_ENTRY(tcp_fd_unsupported)                                           \
    /* core/log */                                                           \
    TEST_ENTRY(log_levels)                                                   \
    TEST_ENTRY(log_format)                                                   \
    TEST_ENTRY(log_one_line)                                                 \
    TEST_ENTRY(log_gvsd_default)                                             \
    /* core/escape: peers' strings in the log and gvs status */              \
    TEST_ENTRY(escape_basic)                                                 \
    TEST_ENTRY(escape_every_byte)                                            \
    TEST_ENTRY(escape_truncation)                                            \
    TEST_ENTRY(server_hello_escaped)                                         \
    TEST_ENTRY(cli_status_escaped)                                           \
    /* server */                                                             \
    TEST_ENTRY(server_echo)                                                  \
    TEST_ENTRY(server_posted_notes)                                          \
    TEST_ENTRY(server_crash_isolated)                                        \
    TEST_ENTRY(server_many_sessions)                                         \
    TEST_ENTRY(server_sigterm)                                               \
    TEST_ENTRY(server_max_sessions)                                          \
    TEST_ENTRY(server_slot_reused)                                           \
    TEST_ENTRY(server_plugin_peer)                                           \
    TEST_ENTRY(server_config_file)                                           \
    TEST_ENTRY(server_options)                                               \
    TEST_ENTRY(server_bad_plugins)                                           \
    TEST_ENTRY(server_bad_magic)                                             \
    TEST_ENTRY(server_oversized_length)                                      \
    TEST_ENTRY(server_unknown_plugin)                                        \
    TEST_ENTRY(server_unknown_op)                                            \
    TEST_ENTRY(server_disconnect_mid_frame)                                  \
    TEST_ENTRY(server_no_hello_first)                                        \
    TEST_ENTRY(server_wrong_version)                                         \
    TEST_ENTRY(server_wrong_table_hash)                                      \
    TEST_ENTRY(server_handshake_timeout)                                     \
    TEST_ENTRY(server_slow_hello_unix)                                       \
    TEST_ENTRY(server_slow_hello_tcp)                                        \
    TEST_ENTRY(server_slow_hello_tls)                                        \
    TEST_ENTRY(server_handshake_limits)                                      \
    TEST_ENTRY(server_close_reasons)                                         \
    TEST_ENTRY(server_malformed_request)                                     \
    TEST_ENTRY(server_bad_flags)                                             \
    TEST_ENTRY(server_lane_echoed)                                           \
    TEST_ENTRY(server_blocking_lane)                                         \
    TEST_ENTRY(server_order_after_blocking_reply)                            \
    TEST_ENTRY(server_posted_blocking_ordered)                               \
    TEST_ENTRY(server_posted_one_wakeup)                                     \
    TEST_ENTRY(server_batch_read_ahead)                                      \
    TEST_ENTRY(server_await_client)                                          \
    TEST_ENTRY(server_blocking_no_wait)                                      \
    TEST_ENTRY(server_bulky_read_on)                                         \
    TEST_ENTRY(server_many_blocked_lanes)                                    \
    TEST_ENTRY(server_notifications)                                         \
    TEST_ENTRY(server_end_while_blocked)                                     \
    TEST_ENTRY(server_vanished_while_blocked)                                \
    TEST_ENTRY(server_bye_after_hangup)                                      \
    TEST_ENTRY(server_error_while_blocked)                                   \
    /* server: start-up errors, vanished peers */                           \
    TEST_ENTRY(server_config_errors)                                         \
    TEST_ENTRY(server_socket_dir)                                            \
    TEST_ENTRY(server_listen_errors)                                         \
    TEST_ENTRY(server_status_connect_error)                                  \
    TEST_ENTRY(server_endpoint_taken)                                        \
    TEST_ENTRY(server_plugin_missing)                                        \
    TEST_ENTRY(server_vanished_peer)                                         \
    /* server: gvs status and metrics */                                    \
    TEST_ENTRY(server_status_sessions)                                       \
    TEST_ENTRY(server_status_memory)                                         \
    TEST_ENTRY(server_status_bad_server)                                     \
    TEST_ENTRY(server_status_token)                                          \
    TEST_ENTRY(server_metrics)                                               \
    TEST_ENTRY(server_metrics_slow_client)                                   \
    TEST_ENTRY(server_metrics_bad_listen)                                    \
    TEST_ENTRY(server_metrics_format)                                        \
    TEST_ENTRY(server_metrics_totals)                                        \
    TEST_ENTRY(server_metrics_gpus)                                          \
    /* client */                                                             \
    TEST_ENTRY(client_lazy_connect)                                          \
    TEST_ENTRY(client_register)                                              \
    TEST_ENTRY(client_no_server)                                             \
    TEST_ENTRY(client_config_errors)                                         \
    TEST_ENTRY(client_default_server_hint)                                   \
    TEST_ENTRY(client_silent_server)                                         \
    TEST_ENTRY(client_killed_unix)                                           \
    TEST_ENTRY(client_killed_unix_plain)                                     \
    TEST_ENTRY(client_killed_tcp)                                            \
    TEST_ENTRY(client_exit_served)                                           \
    TEST_ENTRY(client_handshake_refused)                                     \
    TEST_ENTRY(client_threads)                                               \
    TEST_ENTRY(client_shm_threads)                                           \
    TEST_ENTRY(client_threads_leaders)                                       \
    TEST_ENTRY(client_shm_threads_leaders)                                   \
    TEST_ENTRY(client_shm_idle_reading_free)                                 \
    TEST_ENTRY(client_stats)                                                 \
    TEST_ENTRY(client_pipelining)                                            \
    TEST_ENTRY(client_withdraw)                                              \
    TEST_ENTRY(client_server_killed)                                         \
    TEST_ENTRY(client_shm_server_killed)                                     \
    TEST_ENTRY(client_reply_mismatch)                                        \
    TEST_ENTRY(client_fork)                                                  \
    TEST_ENTRY(client_lanes)                                                 \
    TEST_ENTRY(client_blocking_after_running_post)                           \
    TEST_ENTRY(client_blocked_thread)                                        \
    TEST_ENTRY(client_lane_order)                                            \
    TEST_ENTRY(client_notifications)                                         \
    TEST_ENTRY(client_inline_notifications)                                  \
    TEST_ENTRY(client_notify_into)                                           \
    TEST_ENTRY(client_reply_too_big)                                         \
    TEST_ENTRY(client_killed_waiters)                                        \
    TEST_ENTRY(client_coalesce_order)                                        \
    TEST_ENTRY(client_coalesce_threads)                                      \
    TEST_ENTRY(client_coalesce_burst)                                        \
    TEST_ENTRY(client_coalesce_tcp)                                          \
    TEST_ENTRY(client_coalesce_off)                                          \
    TEST_ENTRY(client_coalesce_shm)                                          \
    TEST_ENTRY(client_coalesce_flusher)                                      \
    TEST_ENTRY(client_coalesce_fork)                                         \
    /* client: bulk replies into the caller's memory */                      \
    TEST_ENTRY(client_into_tail)                                             \
    TEST_ENTRY(client_into_mismatch)                                         \
    TEST_ENTRY(client_into_cut)                                              \
    /* tools/gvs */                                                          \
    TEST_ENTRY(cli_run_private)                                              \
    TEST_ENTRY(cli_run_server)                                               \
    TEST_ENTRY(cli_run_status)                                               \
    TEST_ENTRY(cli_run_gvsd_fails)                                           \
    TEST_ENTRY(cli_usage)                                                    \
    TEST_ENTRY(cli_help)                                                     \
    TEST_ENTRY(cli_option_errors)                                            \
    TEST_ENTRY(cli_man_pages)                                                \
    TEST_ENTRY(cli_run_static)                                               \
    TEST_ENTRY(cli_run_setuid)                                               \
    /* core/spin */                                                          \
    TEST_ENTRY(spin_readable)                                                \
    TEST_ENTRY(spin_readable_shm)                                            \
    TEST_ENTRY(spin_setting)                                                 \
    TEST_ENTRY(spin_peer_away)                                               \
    TEST_ENTRY(spin_load)                                                    \
    TEST_ENTRY(spin_hot_horizon)                                             \
    /* core/handles */                                                       \
    TEST_ENTRY(handles_basic)                                                \
    TEST_ENTRY(handles_many)                                                 \
    TEST_ENTRY(handles_foreign)                                              \
    TEST_ENTRY(handles_nomem)                                                \
    /* core/devices */                                                       \
    TEST_ENTRY(devices_check)                                                \
    TEST_ENTRY(devices_compose)                                              \
    /* core/u64map */                                                        \
    TEST_ENTRY(u64map_basic)                                                 \
    TEST_ENTRY(u64map_nomem)                                                 \
    /* core/auth, server access: tokens, sockets, peers, idle */             \
    TEST_ENTRY(auth_mac_vector)                                              \
    TEST_ENTRY(auth_find_token)                                              \
    TEST_ENTRY(auth_peer_allowed)                                            \
    TEST_ENTRY(auth_uri_exposed)                                             \
    TEST_ENTRY(auth_group_id)                                                \
    TEST_ENTRY(proto_hello_auth_fields)                                      \
    TEST_ENTRY(proto_hello_challenge_reply)                                  \
    TEST_ENTRY(server_token_accepted)                                        \
    TEST_ENTRY(server_token_wrong)                                           \
    TEST_ENTRY(server_token_missing)                                         \
    TEST_ENTRY(server_token_replay)                                          \
    TEST_ENTRY(server_token_none_configured)                                 \
    TEST_ENTRY(server_token_timeout)                                         \
    TEST_ENTRY(server_token_hostile)                                         \
    TEST_ENTRY(client_token_accepted)                                        \
    TEST_ENTRY(client_token_wrong)                                           \
    TEST_ENTRY(client_token_missing)                                         \
    TEST_ENTRY(server_listen_exposed)                                        \
    TEST_ENTRY(server_socket_mode)                                           \
    TEST_ENTRY(server_allow_uid)                                             \
    TEST_ENTRY(server_idle_timeout)                                          \
    TEST_ENTRY(client_keepalive)                                             \
    TEST_ENTRY(client_keepalive_off)                                         \
    /* core/trace: request timelines */                                      \
    TEST_ENTRY(trace_round_trips)                                            \
    /* end */
