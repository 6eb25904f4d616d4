import CLDAP
import Foundation

/// Where the VPN accounts live: an LDAP directory the OpenVPN server authenticates against (Yona's `yona.ldap.*`).
package struct LDAPSettings: Sendable, Equatable {
    package var url: String
    package var baseDN: String
    package var bindDN: String
    package var bindPassword: String
    /// The accounts' branch under the base (Yona's `ou=SSL`).
    package var accountsOU = "ou=SSL"
    /// For connecting and for each operation.
    package var timeoutSeconds = 5

    /// `cn=<login>,ou=SSL,<base>`, as Yona's entries. A login is `<uuid>$<index>`: nothing in it needs escaping.
    package func accountDN(_ login: String) -> String { "cn=\(login),\(accountsOU),\(baseDN)" }

    package init(url: String, baseDN: String, bindDN: String, bindPassword: String) {
        self.url = url
        self.baseDN = baseDN
        self.bindDN = bindDN
        self.bindPassword = bindPassword
    }
}

/// A failed directory operation: OpenLDAP's result code and its text (never a DN or a password).
package struct LDAPFailure: Error, CustomStringConvertible, Equatable {
    package let operation: String
    package let code: Int32

    package var description: String {
        let text = ldap_err2string(code).map { String(cString: $0) } ?? "unknown"
        return "ldap \(operation): \(code) \(text)"
    }
}

/// One bound connection to the directory, for one round of the outbox. Every call blocks (libldap's synchronous
/// API): callers run them on a thread pool, one call at a time.
package final class LDAPConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private let settings: LDAPSettings

    package init(_ settings: LDAPSettings) throws(LDAPFailure) {
        var handle: OpaquePointer?
        let opened = yona_ldap_open(settings.url, Int32(settings.timeoutSeconds), &handle)
        guard opened == LDAP_SUCCESS, let handle else { throw LDAPFailure(operation: "open", code: opened) }
        let bound = yona_ldap_bind(handle, settings.bindDN, settings.bindPassword)
        guard bound == LDAP_SUCCESS else {
            yona_ldap_close(handle)
            throw LDAPFailure(operation: "bind", code: bound)
        }
        self.handle = handle
        self.settings = settings
    }

    deinit { yona_ldap_close(handle) }

    /// Creates the account, or sets its password when it exists already (a retry after a lost answer).
    package func createAccount(login: String, passwordHash: String) throws(LDAPFailure) {
        let dn = settings.accountDN(login)
        let added = yona_ldap_add_vpn_account(handle, dn, login, passwordHash)
        if added == LDAP_SUCCESS { return }
        guard added == LDAP_ALREADY_EXISTS else { throw LDAPFailure(operation: "add", code: added) }
        let replaced = yona_ldap_replace_password(handle, dn, passwordHash)
        guard replaced == LDAP_SUCCESS else { throw LDAPFailure(operation: "modify", code: replaced) }
    }

    /// Deletes the account; one that is not there counts as deleted.
    package func deleteAccount(login: String) throws(LDAPFailure) {
        let deleted = yona_ldap_delete(handle, settings.accountDN(login))
        guard deleted == LDAP_SUCCESS || deleted == LDAP_NO_SUCH_OBJECT else { throw LDAPFailure(operation: "delete", code: deleted) }
    }
}
