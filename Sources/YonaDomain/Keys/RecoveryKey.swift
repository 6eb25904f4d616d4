import Foundation
import YonaCrypto

/// The server's recovery secret (`YONA_RECOVERY_KEY`, or generated into the data directory). It lets the
/// lost-phone overwrite find and delete an old account's anonymized part without the old password: each user
/// row carries that one id sealed under this key (`users.recovery_blob`), and overwrite codes are stored as
/// keyed hashes under it. Kept outside the database, so a dump alone still joins nothing.
package struct RecoveryKey: Sendable {
    package static let byteCount = 32
    private let escrowKey: SymmetricKey
    private let codeHashKey: [UInt8]
    /// Keys the rate-limit buckets, so the counters table cannot be reversed to numbers or addresses from a dump
    /// (every instance shares this secret, so they share the buckets).
    package let rateLimitKey: [UInt8]
    /// Seals what waits in the text outbox (numbers, codes, links), so a dump holds none of it.
    package let outboxKey: SymmetricKey
    /// Seals what waits in the VPN account outbox (logins, password hashes).
    package let vpnOutboxKey: SymmetricKey

    package init(secret: [UInt8]) throws {
        escrowKey = try KeyedHash.deriveKey(fromSecret: secret, context: Array("yona/recovery/escrow/v1".utf8))
        codeHashKey = KeyedHash.hash(Array("yona/recovery/overwrite-code/v1".utf8), key: secret)
        rateLimitKey = KeyedHash.hash(Array("yona/recovery/rate-limit/v1".utf8), key: secret)
        outboxKey = try KeyedHash.deriveKey(fromSecret: secret, context: Array("yona/recovery/text-outbox/v1".utf8))
        vpnOutboxKey = try KeyedHash.deriveKey(fromSecret: secret, context: Array("yona/recovery/vpn-account-outbox/v1".utf8))
    }

    /// The anonymized id of a user, sealed so that only this server can open it, bound to the user row.
    package func seal(userAnonymizedID: UUID, userID: UUID) -> Data {
        Data(AEAD.seal(userAnonymizedID.bytes, key: escrowKey, associatedData: Self.associatedData(userID)))
    }

    package func open(_ blob: Data, userID: UUID) -> UUID? {
        guard let bytes = try? AEAD.open(Array(blob), key: escrowKey, associatedData: Self.associatedData(userID)),
            bytes.count == 16
        else { return nil }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// How an overwrite code is stored: useless for guessing offline without this key.
    package func hashOverwriteCode(_ code: String, userID: UUID) -> Data {
        Data(KeyedHash.hash(userID.bytes + Array(code.utf8), key: codeHashKey))
    }

    private static func associatedData(_ userID: UUID) -> [UInt8] {
        Array("users.recovery_blob".utf8) + [0] + userID.bytes
    }

    /// The configured key, or the one kept in the data directory (made at first start, mode 600).
    package static func resolve(configured: String?, dataDirectory: URL, keep: Bool = true) throws -> RecoveryKey {
        if let configured, let bytes = Base64URL.decode(configured), bytes.count == byteCount {
            return try RecoveryKey(secret: bytes)
        }
        let secret = try DataDirectorySecret.loadOrCreate(
            file: "recovery-key", in: dataDirectory, variable: "YONA_RECOVERY_KEY", keep: keep,
            isValid: { Base64URL.decode($0)?.count == byteCount }, generate: { Base64URL.encode(SecureRandom.bytes(byteCount)) })
        if secret.created {
            FileHandle.standardError.write(
                Data(
                    "Generated the recovery key for lost-phone overwrites (kept in \(secret.file.path)); give every instance the same YONA_RECOVERY_KEY.\n"
                        .utf8))
        }
        return try RecoveryKey(secret: Base64URL.decode(secret.value)!)
    }
}
