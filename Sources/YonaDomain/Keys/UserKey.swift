import Foundation
import YonaCrypto

/// The key that encrypts one user's private data. Derived from the server-issued full-entropy password
/// with keyed BLAKE2b over (label, per-user salt, user id): one hash, so no cache is needed and no key
/// outlives its request.
package struct UserKey: Sendable {
    package let key: SymmetricKey

    package static let saltLength = 16

    package init(password: YonaPassword, salt: [UInt8], userID: UUID) throws {
        let context = Array("yona/user-key/v1".utf8) + salt + userID.bytes
        key = try KeyedHash.deriveKey(fromSecret: password.bytes, context: context)
    }

    /// The key of an invited user, derived from the low-entropy temporary password with Argon2id.
    package init(temporaryPasswordKey: SymmetricKey) {
        key = temporaryPasswordKey
    }

    /// Encrypts a field of a record; `field` and `recordID` are the associated data, so a ciphertext
    /// cannot be moved to another column or row.
    package func seal(_ plaintext: [UInt8], field: String, recordID: UUID) -> EncryptedBlob {
        EncryptedBlob(bytes: AEAD.seal(plaintext, key: key, associatedData: Self.associatedData(field, recordID)))
    }

    package func open(_ blob: EncryptedBlob, field: String, recordID: UUID) throws -> [UInt8] {
        try AEAD.open(blob.bytes, key: key, associatedData: Self.associatedData(field, recordID))
    }

    private static func associatedData(_ field: String, _ recordID: UUID) -> [UInt8] {
        Array(field.utf8) + [0] + recordID.bytes
    }
}

/// Ciphertext as stored: never decoded without a key, never confused with a plaintext.
package struct EncryptedBlob: Sendable, Equatable {
    package let bytes: [UInt8]
    package var data: Data { Data(bytes) }
}

extension UUID {
    package var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }
}
