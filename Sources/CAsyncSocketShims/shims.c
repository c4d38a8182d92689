#define _GNU_SOURCE
#include "CAsyncSocketShims.h"

#ifdef __linux__
int cass_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}
#endif

#ifdef __linux__
int cass_recvmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags) {
    _Static_assert(sizeof(struct cass_mmsghdr) == sizeof(struct mmsghdr), "mmsghdr layout");
    return recvmmsg(fd, (struct mmsghdr *)vec, vlen, flags, NULL);
}

int cass_sendmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags) {
    return sendmmsg(fd, (struct mmsghdr *)vec, vlen, flags);
}
#else
int cass_recvmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags) {
    unsigned int count = 0;
    for (; count < vlen; count++) {
        ssize_t got = recvmsg(fd, &vec[count].msg_hdr, flags);
        if (got < 0) return count > 0 ? (int)count : -1;
        vec[count].msg_len = (unsigned int)got;
    }
    return (int)count;
}

int cass_sendmmsg(int fd, struct cass_mmsghdr *vec, unsigned int vlen, int flags) {
    unsigned int count = 0;
    for (; count < vlen; count++) {
        ssize_t sent = sendmsg(fd, &vec[count].msg_hdr, flags);
        if (sent < 0) return count > 0 ? (int)count : -1;
        vec[count].msg_len = (unsigned int)sent;
    }
    return (int)count;
}
#endif

#ifdef __linux__
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>

int cass_route_change_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
#else
int cass_route_change_socket(void) {
    errno = ENOSYS;
    return -1;
}
#endif
