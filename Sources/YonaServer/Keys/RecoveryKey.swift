import Foundation
import YonaCrypto

/// The server's recovery secret (`YONA_RECOVERY_KEY`, or generated into the data directory). It lets the
/// lost-phone overwrite find and delete an old account's anonymized part without the old password: each user
/// row carries that one id sealed under this key (`users.recovery_blob`), and overwrite codes are stored as
/// keyed hashes under it. Kept outside the database, so a dump alone still joins nothing.
struct RecoveryKey: Sendable {
    static let byteCount = 32
    private let escrowKey: SymmetricKey
    private let codeHashKey: [UInt8]

    init(secret: [UInt8]) throws {
        escrowKey = try KeyedHash.deriveKey(fromSecret: secret, context: Array("yona/recovery/escrow/v1".utf8))
        codeHashKey = KeyedHash.hash(Array("yona/recovery/overwrite-code/v1".utf8), key: secret)
    }

    /// The anonymized id of a user, sealed so that only this server can open it, bound to the user row.
    func seal(userAnonymizedID: UUID, userID: UUID) -> Data {
        Data(AEAD.seal(userAnonymizedID.bytes, key: escrowKey, associatedData: Self.associatedData(userID)))
    }

    func open(_ blob: Data, userID: UUID) -> UUID? {
        guard let bytes = try? AEAD.open(Array(blob), key: escrowKey, associatedData: Self.associatedData(userID)),
              bytes.count == 16 else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// How an overwrite code is stored: useless for guessing offline without this key.
    func hashOverwriteCode(_ code: String, userID: UUID) -> Data {
        Data(KeyedHash.hash(userID.bytes + Array(code.utf8), key: codeHashKey))
    }

    private static func associatedData(_ userID: UUID) -> [UInt8] {
        Array("users.recovery_blob".utf8) + [0] + userID.bytes
    }

    /// The configured key, or the one kept in the data directory (made at first start, mode 600).
    static func resolve(configured: String?, dataDirectory: URL) throws -> RecoveryKey {
        if let configured, let bytes = Base64URL.decode(configured), bytes.count == byteCount {
            return try RecoveryKey(secret: bytes)
        }
        let file = dataDirectory.appendingPathComponent("recovery-key")
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           let bytes = Base64URL.decode(stored), bytes.count == byteCount {
            return try RecoveryKey(secret: bytes)
        }
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let bytes = SecureRandom.bytes(byteCount)
        guard FileManager.default.createFile(atPath: file.path, contents: Data(Base64URL.encode(bytes).utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw AppConfig.Invalid(variable: "YONA_RECOVERY_KEY", problem: "is not set and \(file.path) cannot be written")
        }
        FileHandle.standardError.write(Data("Generated the recovery key for lost-phone overwrites (kept in \(file.path)); give every instance the same YONA_RECOVERY_KEY.\n".utf8))
        return try RecoveryKey(secret: bytes)
    }
}
