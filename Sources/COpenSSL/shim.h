// Debian's OpenSSL 3 (package libssl-dev): https://docs.openssl.org/3.0/man3/
// Swift cannot call OpenSSL's function-like macros; these inline functions stand in for them.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>

static inline long cssl_set_min_proto_version(SSL_CTX *context, int version) {
    return SSL_CTX_set_min_proto_version(context, version);
}
static inline long cssl_set_max_proto_version(SSL_CTX *context, int version) {
    return SSL_CTX_set_max_proto_version(context, version);
}
static inline long cssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long cssl_ctx_set_mode(SSL_CTX *context, long mode) {
    return SSL_CTX_set_mode(context, mode);
}
static inline long cssl_ctx_set_options(SSL_CTX *context, unsigned long options) {
    return (long)SSL_CTX_set_options(context, options);
}
static inline long cssl_ctx_set_session_cache_mode(SSL_CTX *context, long mode) {
    return SSL_CTX_set_session_cache_mode(context, mode);
}
static inline void cssl_free_x509_stack(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}
static inline int cssl_ctx_add_extra_chain_cert(SSL_CTX *context, X509 *certificate) {
    return (int)SSL_CTX_add_extra_chain_cert(context, certificate);
}
static inline int cssl_bio_pending(BIO *bio) {
    return (int)BIO_ctrl_pending(bio);
}
/// No compression (CRIME), no renegotiation: what every modern stack turns off.
static inline unsigned long cssl_default_options(void) {
    return SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
}
/// Record buffers released while idle; partial writes; a write buffer that may move between retries.
static inline long cssl_default_mode(void) {
    return SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
/// A client session cache without OpenSSL's internal store (the app keeps sessions per server).
static inline long cssl_client_session_cache_mode(void) {
    return SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE;
}
/// Pauses the handshake from a certificate verification callback (OpenSSL 3.0, SSL_set_retry_verify(3)).
static inline int cssl_set_retry_verify(SSL *ssl) {
    return SSL_set_retry_verify(ssl);
}
static inline int cssl_x509_stack_count(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}
static inline X509 *cssl_x509_stack_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}
/// For the stage's own BIO (BIO_meth_new): "no bytes yet, try again", as a memory BIO says it.
static inline void cssl_bio_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}
static inline void cssl_bio_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}
