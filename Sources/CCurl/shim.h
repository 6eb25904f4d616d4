#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper per argument kind.
static inline CURLcode yona_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode yona_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode yona_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
// A blob option (CURLOPT_CAINFO_BLOB): libcurl copies the bytes, so they need to outlive only this call.
static inline CURLcode yona_curl_set_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = {(void *)data, length, CURL_BLOB_COPY};
    return curl_easy_setopt(handle, option, &blob);
}
static inline CURLcode yona_curl_set_read_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, function);
}
static inline CURLcode yona_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
