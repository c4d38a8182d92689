// The few ICU functions the chat's user names need (Sources/IMChat/Names), behind plain C types.
//
// Why a shim: ICU's C functions are renamed with the library's major version (`uspoof_open` is a
// macro for `uspoof_open_72`), which Swift cannot see through; and ICU's own types (UErrorCode...)
// clash in Swift with the copy of ICU's headers that Foundation brings (module _FoundationICU). So
// this header names no ICU type, and icu_shims.c, compiled as C against Debian's headers (target
// CICU), does the calls.
//
// Text is UTF-16 (ICU's encoding) as uint16_t code units; code points are uint32_t.
#ifndef CICU_SHIMS_H
#define CICU_SHIMS_H

#include <stdbool.h>
#include <stdint.h>

/// A configured spoof checker with UTS #39's identifier profile. After cicu_checker_open returns,
/// every function taking a `const cicu_checker *` is safe to call from any thread at once.
typedef struct cicu_checker cicu_checker;

/// The bits of cicu_check's result (ICU's USpoofChecks values).
enum {
    CICU_CHECK_RESTRICTION_LEVEL = 16,
    CICU_CHECK_INVISIBLE = 32,
    CICU_CHECK_CHAR_LIMIT = 64,
    CICU_CHECK_MIXED_NUMBERS = 128,
    CICU_CHECK_HIDDEN_OVERLAY = 256,
};

/// Opens a spoof checker making the checks above at the "moderately restrictive" level, with the
/// allowed characters UTS #39's identifier profile (ICU's recommended and inclusion sets). NULL when
/// ICU fails; then *error is ICU's error name (a static string).
cicu_checker *cicu_checker_open(const char **error);
/// Closes a checker of cicu_checker_open.
void cicu_checker_close(cicu_checker *checker);

/// Whether code point `c` is in the identifier profile.
bool cicu_in_profile(const cicu_checker *checker, uint32_t c);
/// The checks `text` fails (bits above; 0: none), or -1 when ICU fails.
int32_t cicu_check(const cicu_checker *checker, const uint16_t *text, int32_t length);
/// UTS #39's skeleton of `text` written to `destination`: its length (if over `capacity`, nothing
/// useful was written: call again with that much room), or -1 when ICU fails.
int32_t cicu_skeleton(const cicu_checker *checker, const uint16_t *text, int32_t length,
                      uint16_t *destination, int32_t capacity);

/// `text` in NFKC (`casefold`: NFKC_Casefold) written to `destination`; returns as cicu_skeleton does.
int32_t cicu_normalize_nfkc(const uint16_t *text, int32_t length, bool casefold, uint16_t *destination, int32_t capacity);

/// Whether code point `c` has the property Default_Ignorable_Code_Point.
bool cicu_is_default_ignorable(uint32_t c);
/// The long name of the script of code point `c` ("Latin"), or NULL for Common, Inherited and Unknown.
const char *cicu_script_name(uint32_t c);
/// The version of the ICU library loaded, such as "72.1", into `buffer` (at least 24 bytes).
void cicu_version(char *buffer);

#endif
