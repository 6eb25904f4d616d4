import Foundation
import NIOSSL
import YonaDomain
import YonaPush

extension AppConfig {
    /// APNs and Web Push (operations.md "Pushes without Google"): APNs when its key is given, Web Push always.
    mutating func readDirectPush(_ env: [String: String]) throws(Invalid) {
        apns = try Self.readAPNs(env)
        vapidPrivateKey = env["YONA_VAPID_PRIVATE_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if let key = vapidPrivateKey, !VAPID.isValidPEM(key) {
            throw Invalid(variable: "YONA_VAPID_PRIVATE_KEY", problem: "is not a PEM P-256 private key (yona-server vapid generate makes one)")
        }
        if let subject = env["YONA_VAPID_SUBJECT"] {
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://"), subject.count > 8 else {
                throw Invalid(variable: "YONA_VAPID_SUBJECT", problem: "must be a mailto: or https: contact, got '\(subject)'")
            }
            vapidSubject = subject
        }
        if let raw = env["YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS"] {
            webPushAllowPrivateEndpoints = try Self.parseBool(raw, "YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS")
        }
    }

    /// The contact the push services see: the operator's, or the public site, or the mail sender.
    package var effectiveVAPIDSubject: String {
        if let vapidSubject { return vapidSubject }
        if let publicBaseURL, publicBaseURL.hasPrefix("https://") { return publicBaseURL }
        return "mailto:\(emailFrom)"
    }

    private static func readAPNs(_ env: [String: String]) throws(Invalid) -> APNsSettings? {
        guard let key = env["YONA_APNS_KEY"], !key.isEmpty else {
            for variable in ["YONA_APNS_KEY_ID", "YONA_APNS_TEAM_ID", "YONA_APNS_TOPIC"] where env[variable] != nil {
                throw Invalid(variable: variable, problem: "is set but YONA_APNS_KEY_FILE (the .p8 key) is not")
            }
            return nil
        }
        func required(_ variable: String) throws(Invalid) -> String {
            guard let value = env[variable], !value.isEmpty else {
                throw Invalid(variable: variable, problem: "must be set when YONA_APNS_KEY_FILE is")
            }
            return value
        }
        let keyID = try required("YONA_APNS_KEY_ID")
        let teamID = try required("YONA_APNS_TEAM_ID")
        for (variable, value) in [("YONA_APNS_KEY_ID", keyID), ("YONA_APNS_TEAM_ID", teamID)]
        where value.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) {
            throw Invalid(variable: variable, problem: "must be Apple's 10-character id (capitals and digits)")
        }
        let topic = try required("YONA_APNS_TOPIC")
        let environment = env["YONA_APNS_ENVIRONMENT"] ?? "production"
        guard ["production", "sandbox"].contains(environment) else {
            throw Invalid(variable: "YONA_APNS_ENVIRONMENT", problem: "must be 'production' or 'sandbox'")
        }
        var url = try httpURL(
            env["YONA_APNS_URL"] ?? (environment == "production" ? APNsSettings.production : APNsSettings.sandbox), "YONA_APNS_URL", required: nil)
        if url.hasSuffix("/") { url.removeLast() }
        var settings = APNsSettings(keyPEM: key, keyID: keyID, teamID: teamID, topic: topic, url: url)
        if let pem = env["YONA_APNS_CA"] {
            guard (try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))?.isEmpty == false else {
                throw Invalid(variable: "YONA_APNS_CA", problem: "holds no PEM certificate")
            }
            settings.trustRootsPEM = pem
        }
        return settings
    }
}
