import Foundation
import NIOSSL
import YonaDelivery
import YonaDomain

extension AppConfig.SMSSettings {
    /// `YONA_SMS_PROVIDER` and the provider's own variables (operations.md "Texts and mail").
    static func read(_ env: [String: String]) throws(AppConfig.Invalid) -> AppConfig.SMSSettings {
        typealias Invalid = AppConfig.Invalid
        func required(_ variable: String, _ provider: String) throws(Invalid) -> String {
            guard let value = env[variable], !value.isEmpty else {
                throw Invalid(variable: variable, problem: "must be set when YONA_SMS_PROVIDER is '\(provider)'")
            }
            return value
        }
        switch env["YONA_SMS_PROVIDER"] ?? "log" {
        case "log":
            return .log
        case "http":
            let raw = try AppConfig.httpURL(env["YONA_SMS_GATEWAY_URL"], "YONA_SMS_GATEWAY_URL", required: "YONA_SMS_PROVIDER is 'http'")
            let from = env["YONA_SMS_FROM"] ?? "Yona"
            guard !from.isEmpty, from.count <= 16 else { throw Invalid(variable: "YONA_SMS_FROM", problem: "must be 1-16 characters") }
            return .http(url: raw, token: env["YONA_SMS_GATEWAY_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }, from: from)
        case "plivo":
            let authID = try required("YONA_PLIVO_AUTH_ID", "plivo")
            guard authID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw Invalid(variable: "YONA_PLIVO_AUTH_ID", problem: "must be Plivo's auth id (letters and digits)")
            }
            let from = try required("YONA_SMS_FROM", "plivo")
            guard isSender(from) else {
                throw Invalid(
                    variable: "YONA_SMS_FROM", problem: "must be a phone number in E.164 (+31…) or an alphanumeric sender id of 1-11 characters")
            }
            return .plivo(
                authID: authID, authToken: try required("YONA_PLIVO_AUTH_TOKEN", "plivo"), from: from,
                api: try AppConfig.httpURL(env["YONA_PLIVO_API_URL"] ?? PlivoSMSTransport.defaultAPI, "YONA_PLIVO_API_URL", required: nil))
        case "twilio":
            let sid = try required("YONA_TWILIO_ACCOUNT_SID", "twilio")
            guard sid.count == 34, sid.hasPrefix("AC"), sid.dropFirst(2).allSatisfy(\.isHexDigit) else {
                throw Invalid(variable: "YONA_TWILIO_ACCOUNT_SID", problem: "must be Twilio's account SID: AC and 32 hexadecimal digits")
            }
            let from = try required("YONA_SMS_FROM", "twilio")
            guard isSender(from) || TwilioSMSTransport.isMessagingService(from) else {
                throw Invalid(
                    variable: "YONA_SMS_FROM",
                    problem: "must be a phone number in E.164 (+31…), an alphanumeric sender id of 1-11 characters or a Messaging Service SID (MG…)")
            }
            return .twilio(
                accountSID: sid, authToken: try required("YONA_TWILIO_AUTH_TOKEN", "twilio"), from: from,
                api: try AppConfig.httpURL(env["YONA_TWILIO_API_URL"] ?? TwilioSMSTransport.defaultAPI, "YONA_TWILIO_API_URL", required: nil))
        default:
            throw Invalid(variable: "YONA_SMS_PROVIDER", problem: "must be 'log', 'http', 'plivo' or 'twilio'")
        }
    }

    /// A sender both providers take: `+` and 8-15 digits, or 1-11 letters, digits and spaces with a letter among them.
    private static func isSender(_ from: String) -> Bool {
        if from.hasPrefix("+") { return (8...15).contains(from.count - 1) && from.dropFirst().allSatisfy(\.isNumber) }
        return (1...11).contains(from.count) && from.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " ") }
            && from.contains(where: \.isLetter)
    }
}

extension AppConfig {
    /// `YONA_EMAIL_PROVIDER` (`log` or `smtp`) and the relay's variables (operations.md "Texts and mail").
    mutating func readEmail(_ env: [String: String]) throws(Invalid) {
        if let from = env["YONA_EMAIL_FROM"], !from.isEmpty {
            guard Self.isMailAddress(from) else {
                throw Invalid(variable: "YONA_EMAIL_FROM", problem: "must be a plain address, e.g. noreply@example.org")
            }
            emailFrom = from
        }
        switch env["YONA_EMAIL_PROVIDER"] ?? "log" {
        case "log":
            email = .log
        case "smtp":
            guard let raw = env["YONA_SMTP_URL"], let url = URL(string: raw), ["smtp", "smtps"].contains(url.scheme ?? ""),
                let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/", url.user == nil
            else {
                throw Invalid(
                    variable: "YONA_SMTP_URL",
                    problem: "must be smtp://host:port (STARTTLS required) or smtps://host:port (TLS) when YONA_EMAIL_PROVIDER is 'smtp'")
            }
            guard env["YONA_EMAIL_FROM"]?.isEmpty == false else {
                throw Invalid(variable: "YONA_EMAIL_FROM", problem: "must be set when YONA_EMAIL_PROVIDER is 'smtp'")
            }
            let username = env["YONA_SMTP_USERNAME"].flatMap { $0.isEmpty ? nil : $0 }
            let password = env["YONA_SMTP_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
            guard (username == nil) == (password == nil) else {
                throw Invalid(
                    variable: username == nil ? "YONA_SMTP_USERNAME" : "YONA_SMTP_PASSWORD", problem: "must be set with its partner, or neither")
            }
            // `YONA_SMTP_CA_FILE` names the file: `withSecretFiles` has put its content here, as for `YONA_FCM_CA`.
            let trustRoots = env["YONA_SMTP_CA"].flatMap { $0.isEmpty ? nil : $0 }
            if let trustRoots, (try? NIOSSLCertificate.fromPEMBytes(Array(trustRoots.utf8)))?.isEmpty != false {
                throw Invalid(variable: "YONA_SMTP_CA", problem: "holds no PEM certificate")
            }
            let base = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
            email = .smtp(.init(url: base, username: username, password: password, fromAddress: emailFrom, trustRootsPEM: trustRoots))
        default:
            throw Invalid(variable: "YONA_EMAIL_PROVIDER", problem: "must be 'log' or 'smtp'")
        }
    }

    private static func isMailAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && address.count <= 254
            && address.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !"<>()[]\\,;:\"".unicodeScalars.contains($0) }
    }

    /// An absolute http(s) URL without a trailing slash.
    static func httpURL(_ raw: String?, _ variable: String, required condition: String?) throws(Invalid) -> String {
        guard let raw, let url = URL(string: raw), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw Invalid(variable: variable, problem: "must be an absolute http(s) URL" + (condition.map { " when \($0)" } ?? ""))
        }
        return raw.hasSuffix("/") ? String(raw.dropLast()) : raw
    }
}

extension AppConfig {
    /// What this server will not do, said in one line at start-up: nil when it sends texts and mails for real.
    package var startupWarning: String? {
        if testServer {
            return "test server: confirmation codes are fixed and the /test endpoints are open; never let it face real users"
        }
        let logged = [sms == .log ? "texts (YONA_SMS_PROVIDER=log)" : nil, email == .log ? "mails (YONA_EMAIL_PROVIDER=log)" : nil].compactMap { $0 }
        guard !logged.isEmpty else { return nil }
        return "\(logged.joined(separator: " and ")) are only logged, not sent: no confirmation code or invitation reaches anyone that way"
    }
}
