// Debian's zlib (package zlib1g-dev): https://zlib.net/manual.html
#include <zlib.h>
