import Foundation

/// Known-answer vectors made by scripts/fixtures/make_crypto_vectors.py with independent implementations.
struct Vectors: Decodable {
    struct Argon2id: Decodable {
        let password, salt: String
        let opslimit: UInt64
        let memlimitBytes: Int
        let key: String
    }
    struct XChaCha: Decodable { let key, nonce, ad, plaintext, ciphertext: String }
    struct Blake2b: Decodable {
        let key, message: String
        let outputLength: Int
        let digest: String
    }
    struct Sealed: Decodable { let secretKey, publicKey, plaintext, sealed: String }

    let argon2id: [Argon2id]
    let xchacha20poly1305: [XChaCha]
    let blake2b: [Blake2b]
    let sealedBox: [Sealed]

    static let shared: Vectors = {
        let url = Bundle.module.url(forResource: "vectors", withExtension: "json", subdirectory: "Fixtures")!
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()
}

extension String {
    var hexBytes: [UInt8] {
        var out: [UInt8] = []
        var index = startIndex
        while index < endIndex {
            let next = self.index(index, offsetBy: 2)
            out.append(UInt8(self[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
