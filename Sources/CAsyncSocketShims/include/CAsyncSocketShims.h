// C shims for what Swift cannot call directly: constants that Glibc imports as enums or macros,
// and the Linux-only headers (epoll, eventfd) that the Glibc module does not export.
#ifndef C_ASYNC_SOCKET_SHIMS_H
#define C_ASYNC_SOCKET_SHIMS_H

#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// socket(2) type for a nonblocking, close-on-exec TCP socket.
static inline int cass_sock_stream_nonblock(void) { return SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC; }
/// socket(2) type for a nonblocking, close-on-exec UDP socket.
static inline int cass_sock_dgram_nonblock(void) { return SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC; }
/// accept4(2) flags: nonblocking, close-on-exec.
static inline int cass_accept_flags(void) { return SOCK_NONBLOCK | SOCK_CLOEXEC; }
/// accept4(2), declared by glibc only under _GNU_SOURCE.
int cass_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
#else
/// socket(2) type for a TCP socket; the caller makes it nonblocking with fcntl(2).
static inline int cass_sock_stream_nonblock(void) { return SOCK_STREAM; }
/// socket(2) type for a UDP socket; the caller makes it nonblocking with fcntl(2).
static inline int cass_sock_dgram_nonblock(void) { return SOCK_DGRAM; }
#endif

/// SOCK_STREAM as an int, for comparing with getsockopt(SO_TYPE).
static inline int cass_sock_stream(void) { return SOCK_STREAM; }

/// send(2) flags that turn SIGPIPE into EPIPE where the platform supports it.
static inline int cass_msg_nosignal(void) {
#ifdef MSG_NOSIGNAL
    return MSG_NOSIGNAL;
#else
    return 0;
#endif
}

/// The thread-local errno, readable from Swift on every platform.
static inline int cass_errno(void) { return errno; }

/// One datagram of a batch for cass_recvmmsg / cass_sendmmsg: the layout of Linux's `struct mmsghdr`
/// (sys/socket.h, declared only under _GNU_SOURCE), so Swift can fill arrays of them.
struct cass_mmsghdr {
    /// The datagram's buffers, address and flags (`msg_flags` gets MSG_TRUNC on a cut datagram).
    struct msghdr msg_hdr;
    /// Bytes received or sent for this datagram; with MSG_TRUNC in the flags of a receive, the
    /// datagram's full length.
    unsigned int msg_len;
};

/// recvmmsg(2) without a timeout: up to `vlen` datagrams in one call (a loop of recvmsg(2) where
/// there is no recvmmsg). Returns the number received, or -1 with errno.
int cass_recvmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags);

/// sendmmsg(2): up to `vlen` datagrams in one call (a loop of sendmsg(2) where there is no sendmmsg).
/// Returns the number sent (fewer than `vlen` when one fails after the first), or -1 with errno
/// when the first fails.
int cass_sendmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags);

/// MSG_TRUNC: as a recvmsg(2) flag, return a datagram's full length; in msg_flags, the datagram
/// was longer than the buffer.
static inline int cass_msg_trunc(void) { return MSG_TRUNC; }

/// A nonblocking, close-on-exec NETLINK_ROUTE socket (netlink(7), rtnetlink(7)) subscribed to
/// the multicast groups of IPv4 and IPv6 route and address changes (RTMGRP_IPV4_ROUTE,
/// RTMGRP_IPV6_ROUTE, RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR from <linux/rtnetlink.h>): each change
/// of the routing table or of an interface address makes it readable. Returns the descriptor, or -1
/// with errno (-1 with ENOSYS off Linux).
int cass_route_change_socket(void);

/// mallopt(3) M_ARENA_MAX (glibc's <malloc.h>, which Swift's Glibc module leaves out): at most
/// `count` malloc arenas for the process. Returns 1 when set, 0 when not (or where there is no such
/// option).
static inline int cass_limit_malloc_arenas(int count) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

/// malloc_trim(3) with a pad of 0 (glibc's <malloc.h>): gives the kernel back every whole free page of
/// every malloc arena, the free pages inside each heap too (madvise(2) MADV_DONTNEED), not only the
/// top of the main heap as free(3) does past M_TRIM_THRESHOLD. Holds each arena's lock while it walks
/// the arena's free chunks: milliseconds for a heap of tens of megabytes. Returns 1 when memory was
/// released, 0 when none was (or where there is no such call).
static inline int cass_release_free_heap_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

#endif
