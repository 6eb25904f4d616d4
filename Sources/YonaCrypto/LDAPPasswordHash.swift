import CLibCrypto
import Foundation

/// The password hash an LDAP directory stores for a VPN account: `{SSHA}` (salted SHA-1, RFC 2307 style), what
/// Yona's LDAPUserService wrote and what OpenLDAP's slapd and the OpenVPN LDAP plugin check a bind against. SHA-1
/// is weak for passwords people choose; these are 32 random characters per device (docs/decisions.md).
public enum LDAPPasswordHash {
    public static let saltLength = 8

    public static func ssha(_ password: String, salt: [UInt8] = SecureRandom.bytes(saltLength)) -> String {
        let digest = sha1(Array(password.utf8) + salt)
        return "{SSHA}" + Data(digest + salt).base64EncodedString()
    }

    /// Whether `hash` is the `{SSHA}` of `password` (for tests and checks; the directory does its own).
    public static func matches(_ hash: String, password: String) -> Bool {
        guard hash.hasPrefix("{SSHA}"), let raw = Data(base64Encoded: String(hash.dropFirst(6))), raw.count > 20 else { return false }
        let bytes = [UInt8](raw)
        return sha1(Array(password.utf8) + bytes[20...]) == Array(bytes[..<20])
    }

    static func sha1(_ input: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let ok = input.withUnsafeBytes { raw in EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha1(), nil) }
        precondition(ok == 1 && length == 20, "SHA-1 is not available in this libcrypto")
        return digest
    }
}
