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
