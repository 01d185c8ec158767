/*
 * Between the files of the config parser (internal to gvs_core).
 */
#ifndef GVS_CONFIG_IMPL_H
#define GVS_CONFIG_IMPL_H

#include "gvs/config.h"

#define CONFIG_WHY_MAX 160

/* A key's setter: 0, GVS_E_NOMEM, or GVS_E_CONFIG with the reason in why
 * (CONFIG_WHY_MAX bytes). */
typedef int (*config_setter_fn)(struct gvs_config *c, const char *key,
                                const char *v, char *why);

/* config.c */
int config_set_string(char **slot, const char *v);
/* A byte count with an optional K, M, G or T suffix, in lo..hi. */
int config_parse_size(const char *key, const char *v, unsigned long long lo,
                      unsigned long long hi, unsigned long long *out,
                      char *why);
int config_parse_range(const char *key, const char *v, unsigned long long lo,
                       unsigned long long hi, unsigned long long *out,
                       char *why);

/* config_access.c: the access and limit keys (docs/security.md). */
int config_set_token(struct gvs_config *c, const char *key, const char *v,
                     char *why);
int config_set_insecure(struct gvs_config *c, const char *key, const char *v,
                        char *why);
int config_set_tls_cert(struct gvs_config *c, const char *key, const char *v,
                        char *why);
int config_set_tls_key(struct gvs_config *c, const char *key, const char *v,
                       char *why);
int config_set_tls_ca(struct gvs_config *c, const char *key, const char *v,
                      char *why);
int config_set_socket_mode(struct gvs_config *c, const char *key,
                           const char *v, char *why);
int config_set_socket_group(struct gvs_config *c, const char *key,
                            const char *v, char *why);
int config_set_allow_uid(struct gvs_config *c, const char *key, const char *v,
                         char *why);
int config_set_allow_gid(struct gvs_config *c, const char *key, const char *v,
                         char *why);
int config_set_idle_timeout(struct gvs_config *c, const char *key,
                            const char *v, char *why);
int config_set_ivshmem_area(struct gvs_config *c, const char *key,
                            const char *v, char *why);
int config_set_keepalive(struct gvs_config *c, const char *key,
                         const char *v, char *why);
int config_set_memory_quota(struct gvs_config *c, const char *key,
                            const char *v, char *why);
int config_set_metrics_listen(struct gvs_config *c, const char *key,
                              const char *v, char *why);
int config_set_metrics_sessions(struct gvs_config *c, const char *key,
                                const char *v, char *why);
/* Frees what the access keys hold. */
void config_access_free(struct gvs_config *c);

#endif
