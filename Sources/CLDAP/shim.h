#define LDAP_DEPRECATED 0
#include <string.h>
#include <sys/time.h>
#include <ldap.h>

// A few plain functions over OpenLDAP's client library (libldap), so Swift needs neither its variadic
// ldap_set_option nor its LDAPMod unions. Every call blocks; the server calls them off its event loops.

/// Opens a handle for `uri` (LDAPv3, no referrals, `timeout_seconds` for connecting and for each operation).
static inline int yona_ldap_open(const char *uri, int timeout_seconds, LDAP **out) {
    int rc = ldap_initialize(out, uri);
    if (rc != LDAP_SUCCESS) return rc;
    int version = LDAP_VERSION3;
    ldap_set_option(*out, LDAP_OPT_PROTOCOL_VERSION, &version);
    ldap_set_option(*out, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
    struct timeval timeout = { timeout_seconds, 0 };
    ldap_set_option(*out, LDAP_OPT_NETWORK_TIMEOUT, &timeout);
    ldap_set_option(*out, LDAP_OPT_TIMEOUT, &timeout);
    return LDAP_SUCCESS;
}

/// A simple bind.
static inline int yona_ldap_bind(LDAP *ld, const char *dn, const char *password) {
    struct berval credentials;
    credentials.bv_val = (char *)password;
    credentials.bv_len = strlen(password);
    return ldap_sasl_bind_s(ld, dn, LDAP_SASL_SIMPLE, &credentials, NULL, NULL, NULL);
}

/// Adds a VPN account entry as Yona's LDAPUserService made it: objectClasses top, account, shadowAccount and
/// posixAccount; cn and uid the login; uidNumber and gidNumber 0; an unused home directory; the hashed password.
static inline int yona_ldap_add_vpn_account(LDAP *ld, const char *dn, const char *login, const char *password_hash) {
    char *classes[] = { (char *)"top", (char *)"account", (char *)"shadowAccount", (char *)"posixAccount", NULL };
    char *logins[] = { (char *)login, NULL };
    char *zero[] = { (char *)"0", NULL };
    char *home[] = { (char *)"/currently/unused", NULL };
    char *password[] = { (char *)password_hash, NULL };
    LDAPMod object_class = { LDAP_MOD_ADD, (char *)"objectClass", { classes } };
    LDAPMod cn = { LDAP_MOD_ADD, (char *)"cn", { logins } };
    LDAPMod uid = { LDAP_MOD_ADD, (char *)"uid", { logins } };
    LDAPMod uid_number = { LDAP_MOD_ADD, (char *)"uidNumber", { zero } };
    LDAPMod gid_number = { LDAP_MOD_ADD, (char *)"gidNumber", { zero } };
    LDAPMod home_directory = { LDAP_MOD_ADD, (char *)"homeDirectory", { home } };
    LDAPMod user_password = { LDAP_MOD_ADD, (char *)"userPassword", { password } };
    LDAPMod *mods[] = { &object_class, &cn, &uid, &uid_number, &gid_number, &home_directory, &user_password, NULL };
    return ldap_add_ext_s(ld, dn, mods, NULL, NULL);
}

/// Replaces the password of an existing entry.
static inline int yona_ldap_replace_password(LDAP *ld, const char *dn, const char *password_hash) {
    char *password[] = { (char *)password_hash, NULL };
    LDAPMod user_password = { LDAP_MOD_REPLACE, (char *)"userPassword", { password } };
    LDAPMod *mods[] = { &user_password, NULL };
    return ldap_modify_ext_s(ld, dn, mods, NULL, NULL);
}

static inline int yona_ldap_delete(LDAP *ld, const char *dn) {
    return ldap_delete_ext_s(ld, dn, NULL, NULL);
}

static inline void yona_ldap_close(LDAP *ld) {
    ldap_unbind_ext_s(ld, NULL, NULL);
}
