import Foundation
import Logging
import YonaCrypto
import YonaDomain

/// Where the files the apps download to set up monitoring come from (operations.md "VPN files"). Each is the
/// sample embedded in the binary (served wherever the server is started), a file the operator names (then it must be
/// readable, or start-up stops naming the variable), or switched off with an empty value (its link is then left out
/// and its endpoint answers 404).
package struct VPNResourceSettings: Sendable, Equatable {
    package enum Source: Sendable, Equatable {
        /// The sample under `Sources/YonaConfig/Samples/`, compiled into the binary.
        case sample
        case file(String)
    }

    package var ovpnProfile: Source? = .sample
    package var sslRootCertificate: Source? = .sample
    package var mobileConfigTemplate: Source? = .sample
    /// Signing of the Apple configuration profile: certificate and key together, or neither (then unsigned, as
    /// Yona with `signingEnabled=false`); the chain (e.g. Apple's intermediate) is optional.
    package var signingCertificatePath: String?
    package var signingKeyPath: String?
    package var signingChainPath: String?
    /// The iOS app that opens `/yonaapp/` links (Yona's `yona.appleAppId`).
    package var appleAppID = "SFWNSYN8YK.com.xaton.yona"

    package static let variables = (
        ovpn: "YONA_OVPN_PROFILE_PATH", rootCert: "YONA_SSL_ROOT_CERT_PATH", template: "YONA_APPLE_MOBILECONFIG_TEMPLATE_PATH",
        certificate: "YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH", key: "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH",
        chain: "YONA_APPLE_MOBILECONFIG_SIGNING_CHAIN_PATH", appID: "YONA_APPLE_APP_ID"
    )

    /// Reads the settings; an empty value switches a file off.
    package mutating func read(_ env: [String: String]) throws(AppConfig.Invalid) {
        let names = Self.variables
        func source(_ variable: String) -> Source?? {
            guard let raw = env[variable] else { return .none }
            return .some(raw.isEmpty ? nil : .file(raw))
        }
        if let value = source(names.ovpn) { ovpnProfile = value }
        if let value = source(names.rootCert) { sslRootCertificate = value }
        if let value = source(names.template) { mobileConfigTemplate = value }
        signingCertificatePath = env[names.certificate].flatMap { $0.isEmpty ? nil : $0 }
        signingKeyPath = env[names.key].flatMap { $0.isEmpty ? nil : $0 }
        signingChainPath = env[names.chain].flatMap { $0.isEmpty ? nil : $0 }
        guard (signingCertificatePath == nil) == (signingKeyPath == nil) else {
            throw AppConfig.Invalid(
                variable: signingCertificatePath == nil ? names.certificate : names.key,
                problem: "must be set together with \(signingCertificatePath == nil ? names.key : names.certificate)")
        }
        if signingChainPath != nil, signingCertificatePath == nil {
            throw AppConfig.Invalid(variable: names.chain, problem: "needs \(names.certificate) and \(names.key)")
        }
        if let appID = env[names.appID] {
            guard !appID.isEmpty, appID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) else {
                throw AppConfig.Invalid(variable: names.appID, problem: "must be a team id and bundle id, e.g. ABCDE12345.com.example.app")
            }
            appleAppID = appID
        }
    }
}

/// The VPN files, read once at start-up: the OpenVPN profile and the SSL root certificate every device
/// downloads, and the Apple configuration profile each iOS device gets with its own VPN account filled in.
package struct VPNResources: Sendable {
    /// The placeholders of the configuration-profile template, replaced (XML-escaped) per device.
    package static let loginIDPlaceholder = "${vpnLoginID}"
    package static let passwordPlaceholder = "${vpnPassword}"

    package let ovpnProfile: [UInt8]?
    package let sslRootCertificate: [UInt8]?
    /// The issuer's common name of the root certificate (Yona's `sslRootCertCN` on the requesting device).
    package let sslRootCertificateCommonName: String?
    package let mobileConfigTemplate: String?
    package let signer: PKCS7Signer?
    package let appleAppID: String

    package static let none = VPNResources(
        ovpnProfile: nil, sslRootCertificate: nil, sslRootCertificateCommonName: nil, mobileConfigTemplate: nil, signer: nil,
        appleAppID: VPNResourceSettings().appleAppID)

    package static func load(_ settings: VPNResourceSettings, logger: Logger) throws(AppConfig.Invalid) -> VPNResources {
        let names = VPNResourceSettings.variables
        func read(_ source: VPNResourceSettings.Source?, _ variable: String, sample: [UInt8]) throws(AppConfig.Invalid) -> [UInt8]? {
            switch source {
            case nil:
                logger.notice("VPN file switched off: its link is left out and its endpoint answers 404", metadata: ["variable": "\(variable)"])
                return nil
            case .sample: return sample
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw AppConfig.Invalid(variable: variable, problem: "names a file that cannot be read: \(path)")
                }
                return Array(data)
            }
        }
        func readGiven(_ path: String?, _ variable: String) throws(AppConfig.Invalid) -> [UInt8]? {
            guard let path else { return nil }
            return try read(.file(path), variable, sample: [])
        }

        let profile = try read(settings.ovpnProfile, names.ovpn, sample: PackageResources.profile_ovpn)
        let rootCertificate = try read(settings.sslRootCertificate, names.rootCert, sample: PackageResources.rootcert_cer)
        var commonName: String?
        if let rootCertificate {
            do {
                commonName = try X509Certificate(pemOrDER: rootCertificate).issuerCommonName
            } catch {
                throw AppConfig.Invalid(variable: names.rootCert, problem: "is not an X.509 certificate (PEM or DER): \(error)")
            }
        }
        var template: String?
        if let bytes = try read(settings.mobileConfigTemplate, names.template, sample: PackageResources.apple_mobileconfig_xml) {
            guard let text = String(bytes: bytes, encoding: .utf8), text.contains(loginIDPlaceholder), text.contains(passwordPlaceholder) else {
                throw AppConfig.Invalid(
                    variable: names.template, problem: "must be UTF-8 text holding \(loginIDPlaceholder) and \(passwordPlaceholder)")
            }
            template = text
        }
        var signer: PKCS7Signer?
        if let certificateBytes = try readGiven(settings.signingCertificatePath, names.certificate),
            let keyBytes = try readGiven(settings.signingKeyPath, names.key)
        {
            let certificate: X509Certificate
            do {
                certificate = try X509Certificate(pemOrDER: certificateBytes)
            } catch {
                throw AppConfig.Invalid(variable: names.certificate, problem: "is not an X.509 certificate (PEM or DER): \(error)")
            }
            var chain: [X509Certificate] = []
            if let chainBytes = try readGiven(settings.signingChainPath, names.chain) {
                do {
                    chain = try X509Certificate.bundle(pem: chainBytes)
                } catch {
                    throw AppConfig.Invalid(variable: names.chain, problem: "is not a PEM certificate bundle: \(error)")
                }
            }
            do {
                signer = try PKCS7Signer(certificate: certificate, privateKeyPEM: keyBytes, chain: chain)
            } catch {
                // The reason names the failing step, never the key.
                throw AppConfig.Invalid(variable: names.key, problem: "is not a usable unencrypted PEM key for the certificate: \(error)")
            }
        }
        return VPNResources(
            ovpnProfile: profile, sslRootCertificate: rootCertificate, sslRootCertificateCommonName: commonName,
            mobileConfigTemplate: template, signer: signer, appleAppID: settings.appleAppID)
    }

    /// The Apple configuration profile for one device's VPN account, signed when a signing key is configured;
    /// nil when no template is.
    package func mobileConfig(loginID: String, password: String) throws -> [UInt8]? {
        guard let mobileConfigTemplate else { return nil }
        let filled =
            mobileConfigTemplate
            .replacingOccurrences(of: Self.loginIDPlaceholder, with: Markup.escaped(loginID))
            .replacingOccurrences(of: Self.passwordPlaceholder, with: Markup.escaped(password))
        let bytes = Array(filled.utf8)
        return try signer?.sign(bytes) ?? bytes
    }

    /// Yona's `apple-app-site-association`: links under `/yonaapp/` open the configured iOS app.
    package var appleAppSiteAssociation: AppleAppSiteAssociation {
        AppleAppSiteAssociation(applinks: .init(apps: [], details: [.init(appID: appleAppID, paths: ["/yonaapp/"])]))
    }

    package struct AppleAppSiteAssociation: Codable, Sendable, Equatable {
        package struct AppLinks: Codable, Sendable, Equatable {
            package let apps: [String]
            package let details: [Detail]
        }
        package struct Detail: Codable, Sendable, Equatable {
            package let appID: String
            package let paths: [String]
        }
        package let applinks: AppLinks
    }
}
