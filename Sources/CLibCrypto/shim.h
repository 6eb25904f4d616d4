#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

// STACK_OF(X509) is made of macros and inline functions in OpenSSL 3; these three give Swift plain functions.
static inline STACK_OF(X509) *yona_x509_stack_new(void) { return sk_X509_new_null(); }
static inline int yona_x509_stack_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
static inline void yona_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
