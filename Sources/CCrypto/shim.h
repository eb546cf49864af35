#ifndef ENCLAB_CCRYPTO_SHIM_H
#define ENCLAB_CCRYPTO_SHIM_H
/* OpenSSL's libcrypto (Debian's libssl-dev), for SHA-256 through the EVP digest interface only. */
#include <openssl/evp.h>
#endif
