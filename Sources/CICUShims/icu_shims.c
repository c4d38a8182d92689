// See include/CICUShims.h.
#include "CICUShims.h"

#include <stdlib.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uset.h>
#include <unicode/uspoof.h>
#include <unicode/uversion.h>

struct cicu_checker {
    USpoofChecker *spoof;
    USet *profile;
};

cicu_checker *cicu_checker_open(const char **error) {
    UErrorCode status = U_ZERO_ERROR;
    USet *profile = uset_openEmpty();
    uset_addAll(profile, uspoof_getRecommendedSet(&status));
    uset_addAll(profile, uspoof_getInclusionSet(&status));
    uset_freeze(profile);
    USpoofChecker *spoof = uspoof_open(&status);
    uspoof_setAllowedChars(spoof, profile, &status);
    uspoof_setChecks(spoof, CICU_CHECK_RESTRICTION_LEVEL | CICU_CHECK_INVISIBLE | CICU_CHECK_CHAR_LIMIT
                     | CICU_CHECK_MIXED_NUMBERS | CICU_CHECK_HIDDEN_OVERLAY, &status);
    uspoof_setRestrictionLevel(spoof, USPOOF_MODERATELY_RESTRICTIVE);
    cicu_checker *checker = malloc(sizeof *checker);
    if (U_FAILURE(status) || checker == NULL) {
        *error = U_FAILURE(status) ? u_errorName(status) : "out of memory";
        uspoof_close(spoof);
        uset_close(profile);
        free(checker);
        return NULL;
    }
    checker->spoof = spoof;
    checker->profile = profile;
    return checker;
}

void cicu_checker_close(cicu_checker *checker) {
    uspoof_close(checker->spoof);
    uset_close(checker->profile);
    free(checker);
}

bool cicu_in_profile(const cicu_checker *checker, uint32_t c) {
    return c <= 0x10FFFF && uset_contains(checker->profile, (UChar32)c);
}

int32_t cicu_check(const cicu_checker *checker, const uint16_t *text, int32_t length) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t failed = uspoof_check2(checker->spoof, text, length, NULL, &status);
    return U_FAILURE(status) ? -1 : failed;
}

/// The length an ICU function writing UTF-16 returned: the needed length when the buffer was too small.
static int32_t written(int32_t length, UErrorCode status) {
    return status == U_BUFFER_OVERFLOW_ERROR || U_SUCCESS(status) ? length : -1;
}

int32_t cicu_skeleton(const cicu_checker *checker, const uint16_t *text, int32_t length,
                      uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t result = uspoof_getSkeleton(checker->spoof, 0, text, length, destination, capacity, &status);
    return written(result, status);
}

int32_t cicu_normalize_nfkc(const uint16_t *text, int32_t length, bool casefold, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = casefold ? unorm2_getNFKCCasefoldInstance(&status) : unorm2_getNFKCInstance(&status);
    if (U_FAILURE(status)) return -1;
    int32_t result = unorm2_normalize(normalizer, text, length, destination, capacity, &status);
    return written(result, status);
}

bool cicu_is_default_ignorable(uint32_t c) {
    return c <= 0x10FFFF && u_hasBinaryProperty((UChar32)c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
}

const char *cicu_script_name(uint32_t c) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript((UChar32)c, &status);
    if (U_FAILURE(status) || script == USCRIPT_COMMON || script == USCRIPT_INHERITED || script == USCRIPT_UNKNOWN) return NULL;
    return uscript_getName(script);
}

void cicu_version(char *buffer) {
    UVersionInfo version;
    u_getVersion(version);
    u_versionToString(version, buffer);
}
