#define _GNU_SOURCE
#include "CAsyncSocketShims.h"

#ifdef __linux__
int cass_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}
#endif
