/*
 * Private contracts between the files of the remoting layer's frontend,
 * libgvs-remote.so.0 (docs/remoting.md): one copy per process, loaded as
 * a dependency of every API frontend (libcudart.so.13, libcuda.so.1), so
 * that the layer's state is one for all of them.
 */
#ifndef REMOTE_FE_H
#define REMOTE_FE_H

/* output.c: device printf and assert output reaches the program's
 * stdout and stderr.  0 or a negative GVS_E_* code. */
int remote_fe_output_init(void);

/* callbacks.c: the backend's CALLBACK_RUN runs the program's host
 * callbacks on the notify thread.  0 or a negative GVS_E_* code. */
int remote_fe_callbacks_init(void);

#endif
