// Debian's ICU 72 (package libicu-dev): the spoof checker (UTS #39), normalizers and character
// properties. https://unicode-org.github.io/icu-docs/apidoc/released/icu4c/uspoof_8h.html
//
// Only the C target CICUShims includes this: Swift code must not import it, because Foundation brings
// its own copy of ICU's headers (module _FoundationICU) and Clang refuses two definitions of the same
// C types (UErrorCode...) in one Swift module. CICUShims gives Swift a plain C interface instead.
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uset.h>
#include <unicode/uspoof.h>
#include <unicode/uversion.h>
