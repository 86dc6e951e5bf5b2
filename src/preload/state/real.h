/* SPDX-License-Identifier: MIT */
/*
 * real.h - the real libc functions behind every interposed name.
 *
 * Each rs_real_<name>() calls the next definition of <name> after this
 * library (dlsym RTLD_NEXT), resolved on first use and cached.  Resolution
 * is lazy because another library's constructor may call connect() before
 * ours runs, and thread-safe because two threads may race to resolve (they
 * store the same pointer).  A symbol the C library lacks fails with ENOSYS.
 *
 * Inside src/, only these may be called, never the interposed names
 * themselves (scripts/lint-calls.sh checks it).
 */
#ifndef RS_REAL_H
#define RS_REAL_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <wordexp.h>

int rs_real_connect(int fd, const struct sockaddr *sa, socklen_t len);
int rs_real_socket(int domain, int type, int protocol);
int rs_real_socketpair(int domain, int type, int protocol, int sv[2]);
int rs_real_accept(int fd, struct sockaddr *sa, socklen_t *len);
int rs_real_accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags);
int rs_real_close(int fd);
int rs_real_close_range(unsigned first, unsigned last, int flags);
int rs_real_shutdown(int fd, int how);
int rs_real_dup(int fd);
int rs_real_dup2(int fd, int fd2);
int rs_real_dup3(int fd, int fd2, int flags);
int rs_real_fcntl(int fd, int cmd, uintptr_t arg);
int rs_real_fcntl64(int fd, int cmd, uintptr_t arg);
int rs_real_ioctl(int fd, unsigned long req, uintptr_t arg);
int rs_real_getsockopt(int fd, int level, int name, void *val,
    socklen_t *len);
int rs_real_setsockopt(int fd, int level, int name, const void *val,
    socklen_t len);

ssize_t rs_real_read(int fd, void *buf, size_t n);
ssize_t rs_real_readv(int fd, const struct iovec *iov, int cnt);
ssize_t rs_real_recv(int fd, void *buf, size_t n, int flags);
ssize_t rs_real_recvfrom(int fd, void *buf, size_t n, int flags,
    struct sockaddr *sa, socklen_t *len);
ssize_t rs_real_recvmsg(int fd, struct msghdr *msg, int flags);
int rs_real_recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags,
    struct timespec *tmo);
ssize_t rs_real_write(int fd, const void *buf, size_t n);
ssize_t rs_real_writev(int fd, const struct iovec *iov, int cnt);
ssize_t rs_real_send(int fd, const void *buf, size_t n, int flags);
ssize_t rs_real_sendto(int fd, const void *buf, size_t n, int flags,
    const struct sockaddr *sa, socklen_t len);
ssize_t rs_real_sendmsg(int fd, const struct msghdr *msg, int flags);
int rs_real_sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags);

int rs_real_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int rs_real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask);
int rs_real_select(int n, fd_set *r, fd_set *w, fd_set *e,
    struct timeval *tmo);
int rs_real_pselect(int n, fd_set *r, fd_set *w, fd_set *e,
    const struct timespec *tmo, const sigset_t *mask);
int rs_real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int rs_real_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms);
int rs_real_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask);
int rs_real_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask);

int rs_real_execve(const char *path, char *const argv[], char *const envp[]);
int rs_real_execv(const char *path, char *const argv[]);
int rs_real_execvp(const char *file, char *const argv[]);
int rs_real_execvpe(const char *file, char *const argv[], char *const envp[]);
int rs_real_fexecve(int fd, char *const argv[], char *const envp[]);
int rs_real_posix_spawn(pid_t *pid, const char *path,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
    char *const argv[], char *const envp[]);
int rs_real_posix_spawnp(pid_t *pid, const char *file,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
    char *const argv[], char *const envp[]);
int rs_real_system(const char *cmd);
FILE *rs_real_popen(const char *cmd, const char *mode);
int rs_real_wordexp(const char *words, wordexp_t *p, int flags);

int rs_real_getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res);
struct hostent *rs_real_gethostbyname(const char *name);
struct hostent *rs_real_gethostbyname2(const char *name, int af);
int rs_real_gethostbyname_r(const char *name, struct hostent *ret, char *buf,
    size_t len, struct hostent **result, int *h_errnop);
int rs_real_gethostbyname2_r(const char *name, int af, struct hostent *ret,
    char *buf, size_t len, struct hostent **result, int *h_errnop);

/*
 * A real call's result with its -1/errno turned into -errno, the engines'
 * convention (interpose.c's LIBC_RET() converts back at the boundary).
 */
#define RS_NEG_ERRNO(call) \
	({ __typeof__(call) r_ = (call); r_ < 0 ? -errno : r_; })

#endif /* RS_REAL_H */
