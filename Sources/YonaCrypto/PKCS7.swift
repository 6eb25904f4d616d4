import CLibCrypto

/// A failure of OpenSSL's libcrypto, with the library's own reason (never key material).
public struct LibCryptoError: Error, CustomStringConvertible, Equatable {
    public let description: String

    /// The reason OpenSSL queued for the last failure, prefixed with what was being done.
    static func last(_ doing: String) -> LibCryptoError {
        var reason = [CChar](repeating: 0, count: 256)
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return LibCryptoError(description: doing) }
        ERR_error_string_n(code, &reason, reason.count)
        let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return LibCryptoError(description: "\(doing): \(text)")
    }
}

/// An X.509 certificate read from PEM or DER.
public final class X509Certificate: @unchecked Sendable {
    // Read-only after init; OpenSSL's certificate objects may be shared between threads for reading.
    let pointer: OpaquePointer

    public init(pemOrDER bytes: [UInt8]) throws(LibCryptoError) {
        if let certificate = Self.readPEM(bytes) ?? Self.readDER(bytes) {
            pointer = certificate
        } else {
            throw LibCryptoError.last("reading an X.509 certificate")
        }
    }

    /// Every certificate of a PEM bundle, in order (an intermediate chain).
    public static func bundle(pem bytes: [UInt8]) throws(LibCryptoError) -> [X509Certificate] {
        let bio = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw LibCryptoError.last("reading a certificate bundle") }
        defer { BIO_free(bio) }
        var certificates: [X509Certificate] = []
        while let next = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates.append(X509Certificate(owning: next))
        }
        ERR_clear_error() // the end of the bundle reads as a "no start line" error
        guard !certificates.isEmpty else { throw LibCryptoError(description: "reading a certificate bundle: no PEM certificate in it") }
        return certificates
    }

    private init(owning pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }

    /// The common name of the certificate's issuer (Yona's `sslRootCertCN`), nil when it has none.
    public var issuerCommonName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(X509_get_issuer_name(pointer), NID_commonName, &buffer, Int32(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func readPEM(_ bytes: [UInt8]) -> OpaquePointer? {
        let bio = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { return nil }
        defer { BIO_free(bio) }
        let certificate = PEM_read_bio_X509(bio, nil, nil, nil)
        if certificate == nil { ERR_clear_error() }
        return certificate
    }

    private static func readDER(_ bytes: [UInt8]) -> OpaquePointer? {
        bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return d2i_X509(nil, &cursor, raw.count)
        }
    }
}

/// Signs content as PKCS#7 signedData with the content attached (what iOS expects of a signed configuration
/// profile): a signing certificate, its private key and the intermediate certificates to include.
public final class PKCS7Signer: @unchecked Sendable {
    // Read-only after init; PKCS7_sign only reads the certificate, key and chain.
    private let certificate: X509Certificate
    private let key: OpaquePointer
    private let chain: [X509Certificate]

    /// `privateKeyPEM`: an unencrypted PEM private key (PKCS#8 or the traditional RSA/EC forms).
    public init(certificate: X509Certificate, privateKeyPEM: [UInt8], chain: [X509Certificate] = []) throws(LibCryptoError) {
        let bio = privateKeyPEM.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw LibCryptoError.last("reading the signing key") }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw LibCryptoError.last("reading the signing key") }
        guard X509_check_private_key(certificate.pointer, key) == 1 else {
            EVP_PKEY_free(key)
            throw LibCryptoError.last("the signing key does not belong to the signing certificate")
        }
        self.certificate = certificate
        self.key = key
        self.chain = chain
    }

    deinit { EVP_PKEY_free(key) }

    /// The DER encoding of a PKCS#7 signedData holding `content` (binary, no MIME canonicalisation).
    public func sign(_ content: [UInt8]) throws(LibCryptoError) -> [UInt8] {
        guard let stack = yona_x509_stack_new() else { throw LibCryptoError.last("signing") }
        defer { yona_x509_stack_free(stack) }
        for certificate in chain {
            // The stack frees what it holds: give it its own reference.
            X509_up_ref(certificate.pointer)
            guard yona_x509_stack_push(stack, certificate.pointer) > 0 else {
                X509_free(certificate.pointer)
                throw LibCryptoError.last("signing")
            }
        }
        let input = content.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let input else { throw LibCryptoError.last("signing") }
        defer { BIO_free(input) }
        guard let signed = PKCS7_sign(certificate.pointer, key, stack, input, PKCS7_BINARY) else {
            throw LibCryptoError.last("signing")
        }
        defer { PKCS7_free(signed) }
        let length = i2d_PKCS7(signed, nil)
        guard length > 0 else { throw LibCryptoError.last("encoding the signature") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PKCS7(signed, &cursor)
        }
        guard written == length else { throw LibCryptoError.last("encoding the signature") }
        return der
    }
}
