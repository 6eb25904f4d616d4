import CSodium

/// Errors of the crypto module; none of them carries key material.
public enum CryptoError: Error, Equatable, Sendable {
    case initializationFailed
    /// The ciphertext was not made with this key and associated data, or it was altered.
    case authenticationFailed
    case invalidLength(expected: Int, actual: Int)
    /// Argon2id could not get the memory or the limits are out of range.
    case keyDerivationFailed
}

/// libsodium must be initialised once before use; every public entry point calls this.
enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }
}

/// Cryptographically secure random bytes from libsodium.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// A uniformly distributed integer in `0..<upperBound`.
    public static func uniform(_ upperBound: UInt32) -> UInt32 {
        Sodium.ensureInitialized()
        return randombytes_uniform(upperBound)
    }
}

/// Constant-time comparison and wiping of secrets.
public enum SecretMemory {
    /// Compares in time that depends only on the length, never on where the inputs differ.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 }
        }
    }

    /// Overwrites the bytes with zeros in a way the optimiser may not remove.
    public static func wipe(_ bytes: inout [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!, count) }
    }
}
