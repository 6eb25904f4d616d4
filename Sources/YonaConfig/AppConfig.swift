import Foundation
import NIOSSL
import YonaCrypto
import YonaDelivery
import YonaDomain
import YonaPush

/// Everything the server reads from its environment, validated once at start-up.
public struct AppConfig: Sendable {
    public enum DatabaseTarget: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)
    }

    public var database: DatabaseTarget
    public var host: String
    public var port: Int
    public var publicBaseURL: String?
    /// The internal listener (the analyzer and admin APIs, `/metrics`); with no port they share the public one.
    public var internalHost: String = "127.0.0.1"
    public var internalPort: Int?
    /// `text` (the default) or `json`: one JSON object per log line, for log collectors.
    public var logFormat: LogFormat = .text

    public enum LogFormat: String, Sendable {
        case text
        case json
    }
    public var testServer: Bool
    public var kdfLimits: PasswordHash.Limits
    public var logLevel: String
    public var maxBodyBytes: Int
    /// Proxies whose `X-Forwarded-For` is believed (privacy.md "Abuse limits").
    package var trustedProxies: [CIDR]
    public var rateLimitPerClientPerMinute: Int
    public var rateLimitPerNumberPerHour: Int
    /// Buddy requests one account may send a day (each may text a number): the invitation is no open relay.
    public var buddyRequestsPerAccountPerDay: Int = 20
    /// Profile photos one account may upload a day (each is kept for the retention period even once replaced).
    public var photoUploadsPerAccountPerDay: Int = 20
    /// Who may get an account: a cap and white-listed numbers (operations.md "Limiting sign-up").
    package var signUp = SignUpGate()
    /// A console session ends after this long without a request (`YONA_CONSOLE_IDLE_SECONDS`).
    public var consoleIdleTimeout: TimeInterval = 1800
    /// How long a request's read waits for the database before it answers 503 (`DeadlineReads`, issue 36).
    public var databaseReadDeadline: TimeInterval = 20
    /// Bearer token of the analyzer and admin APIs; generated and kept in the data directory when unset.
    public var internalToken: String?
    /// Seals each user's anonymized id for the lost-phone overwrite; generated and kept in the data directory when unset.
    public var recoveryKey: String?
    /// Push delivery (push.md "Settings").
    package var push: PushSettings
    /// `log` (the embedded default) or `fcm` (the default when a service account is configured).
    public var pushProvider: String
    /// Path of the Firebase service-account JSON.
    public var fcmServiceAccountPath: String?
    /// FCM's base URL; tests point it at the local emulator.
    public var fcmEndpoint: String
    /// Extra trust roots (PEM) for the FCM endpoint's TLS, beside the system's: a TLS-inspecting proxy's CA, or the
    /// test CA of a local endpoint (`YONA_FCM_CA`, or `YONA_FCM_CA_FILE` naming the file).
    public var fcmTrustRootsPEM: String? = nil
    /// Apple's push service with token authentication; nil: APNs addresses are only logged.
    package var apns: APNsSettings? = nil
    /// The VAPID key (PEM) of Web Push; generated and kept in the data directory when unset.
    public var vapidPrivateKey: String? = nil
    /// The contact Web Push services see (`mailto:` or `https:`).
    public var vapidSubject: String? = nil
    /// Tests only: Web Push endpoints over http and on private or loopback addresses.
    public var webPushAllowPrivateEndpoints = false
    /// How long a new-device request stays usable.
    public var newDeviceRequestLifetime: TimeInterval
    /// How long after a pin reset request its code is texted and usable (Yona: a day; 10 s on test servers).
    public var pinResetDelay: TimeInterval?
    /// The oldest app versions served (none by default).
    package var minimumAppVersions = AppVersionPolicy()
    package var effectivePinResetDelay: TimeInterval { pinResetDelay ?? (testServer ? 10 : 86_400) }
    /// The VPN files the apps download (operations.md "VPN files").
    package var vpn = VPNResourceSettings()
    /// Where devices' VPN accounts are provisioned: nowhere (the embedded default) or an LDAP directory.
    package var vpnAccounts: LDAPSettings? = nil
    /// Where texts go: the `log` (records that a text went out, sends nothing), an HTTP gateway, Plivo or Twilio.
    public var sms: SMSSettings = .log

    public enum SMSSettings: Sendable, Equatable {
        case log
        /// `POST {url}` with `{"from","to","text"}`, `Authorization: Bearer {token}` when a token is set.
        case http(url: String, token: String?, from: String)
        /// Plivo's Send Message API at `api` (Plivo's own unless a test points it elsewhere).
        case plivo(authID: String, authToken: String, from: String, api: String)
        /// Twilio's Messages API at `api`; `from` a number, an alphanumeric sender id or a Messaging Service SID.
        case twilio(accountSID: String, authToken: String, from: String, api: String)
    }

    /// Where mails go: the `log` (records that a mail went out) or an SMTP relay.
    package var email: EmailSettings = .log
    /// The address mails come from (`YONA_EMAIL_FROM`; Yona's when unset and mails are only logged).
    package var emailFrom: String = Email.defaultFromAddress

    package enum EmailSettings: Sendable, Equatable {
        case log
        case smtp(SMTPEmailTransport.Settings)
    }

    /// Where links in pushes point: the public base URL, or the listen address.
    package var pushBaseURL: String { publicBaseURL ?? "http://\(host):\(port)" }

    /// The embedded default: SQLite under ./data, loopback, no test-server features.
    public static let `default` = AppConfig(
        database: .sqlite(path: "./data/yona.sqlite"), host: "127.0.0.1", port: 8080, publicBaseURL: nil,
        testServer: false, kdfLimits: .interactive, logLevel: "info", maxBodyBytes: 64 * 1024,
        trustedProxies: [], rateLimitPerClientPerMinute: 20, rateLimitPerNumberPerHour: 10, internalToken: nil, recoveryKey: nil,
        push: PushSettings(), pushProvider: "log", fcmServiceAccountPath: nil, fcmEndpoint: "https://fcm.googleapis.com",
        newDeviceRequestLifetime: 86_400)

    /// A start-up failure that names the variable and what is wrong with it.
    public typealias Invalid = ConfigurationError

    /// Container platforms mount secrets as files: `YONA_X_FILE=/run/secrets/x` stands for `YONA_X` holding the
    /// file's content (a trailing newline dropped). Giving both is a mistake, and so is a file that cannot be read.
    package static func withSecretFiles(_ env: [String: String]) throws(Invalid) -> [String: String] {
        var expanded = env
        for (key, path) in env where key.hasPrefix("YONA_") && key.hasSuffix("_FILE") {
            let variable = String(key.dropLast("_FILE".count))
            guard env[variable] == nil else { throw Invalid(variable: key, problem: "and \(variable) are both set; give one") }
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw Invalid(variable: key, problem: "names a file that cannot be read: \(path)")
            }
            expanded[variable] = text.hasSuffix("\n") ? String(text.dropLast()) : text
            expanded[key] = nil
        }
        return expanded
    }

    public static func fromEnvironment(_ given: [String: String]) throws(Invalid) -> AppConfig {
        let env = try withSecretFiles(given)
        var config = AppConfig.default
        if let url = env["YONA_DATABASE_URL"] { config.database = try parseDatabaseURL(url) }
        if let host = env["YONA_HOST"] {
            guard !host.isEmpty else { throw Invalid(variable: "YONA_HOST", problem: "must not be empty") }
            config.host = host
        }
        if let port = env["YONA_PORT"] {
            guard let value = Int(port), (1...65535).contains(value) else {
                throw Invalid(variable: "YONA_PORT", problem: "must be a port number 1-65535, got '\(port)'")
            }
            config.port = value
        }
        if let host = env["YONA_INTERNAL_HOST"] {
            guard !host.isEmpty else { throw Invalid(variable: "YONA_INTERNAL_HOST", problem: "must not be empty") }
            config.internalHost = host
        }
        if let port = env["YONA_INTERNAL_PORT"], !port.isEmpty {
            guard let value = Int(port), (1...65535).contains(value) else {
                throw Invalid(variable: "YONA_INTERNAL_PORT", problem: "must be a port number 1-65535, got '\(port)'")
            }
            config.internalPort = value
        }
        if config.internalPort == config.port, config.internalHost == config.host {
            throw Invalid(variable: "YONA_INTERNAL_PORT", problem: "must differ from YONA_PORT (leave it unset to serve everything on one port)")
        }
        if let format = env["YONA_LOG_FORMAT"] {
            guard let value = LogFormat(rawValue: format.lowercased()) else {
                throw Invalid(variable: "YONA_LOG_FORMAT", problem: "must be 'text' or 'json'")
            }
            config.logFormat = value
        }
        if let base = env["YONA_PUBLIC_BASE_URL"] {
            guard let url = URL(string: base), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw Invalid(variable: "YONA_PUBLIC_BASE_URL", problem: "must be an absolute http(s) URL")
            }
            config.publicBaseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        }
        if let flag = env["YONA_TEST_SERVER"] { config.testServer = try parseBool(flag, "YONA_TEST_SERVER") }
        // A production server on a public address keeps `/metrics`, the analyzer and the admin API off it: unless
        // YONA_INTERNAL_PORT says where, they are served at YONA_INTERNAL_HOST (loopback) on YONA_PORT + 1.
        if config.internalPort == nil, !config.testServer, !isLoopback(config.host) {
            config.internalPort = config.port < 65535 ? config.port + 1 : config.port - 1
        }
        if let ops = env["YONA_KDF_OPSLIMIT"] {
            guard let value = UInt64(ops), value >= PasswordHash.Limits.minimumOpsLimit else {
                throw Invalid(variable: "YONA_KDF_OPSLIMIT", problem: "must be an integer >= \(PasswordHash.Limits.minimumOpsLimit)")
            }
            config.kdfLimits.opsLimit = value
        }
        if let mem = env["YONA_KDF_MEMLIMIT"] {
            guard let value = Int(mem), value >= PasswordHash.Limits.minimumMemLimit else {
                throw Invalid(variable: "YONA_KDF_MEMLIMIT", problem: "must be a byte count >= \(PasswordHash.Limits.minimumMemLimit)")
            }
            config.kdfLimits.memLimit = value
        }
        if let level = env["YONA_LOG_LEVEL"] {
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(level.lowercased()) else {
                throw Invalid(variable: "YONA_LOG_LEVEL", problem: "must be one of \(levels.joined(separator: ", "))")
            }
            config.logLevel = level.lowercased()
        }
        if let token = env["YONA_INTERNAL_TOKEN"] {
            guard token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw Invalid(variable: "YONA_INTERNAL_TOKEN", problem: "must be at least 16 printable characters without spaces")
            }
            config.internalToken = token
        }
        if let key = env["YONA_RECOVERY_KEY"] {
            guard let bytes = Base64URL.decode(key), bytes.count == RecoveryKey.byteCount else {
                throw Invalid(
                    variable: "YONA_RECOVERY_KEY",
                    problem: "must be 32 bytes in base64url (43 characters, e.g. from `openssl rand 32 | basenc --base64url | tr -d =`)")
            }
            config.recoveryKey = key
        }
        if let proxies = env["YONA_TRUSTED_PROXIES"] {
            config.trustedProxies = try proxies.split(separator: ",").map { item throws(Invalid) in
                let text = item.trimmingCharacters(in: .whitespaces)
                guard let cidr = CIDR(text) else {
                    throw Invalid(variable: "YONA_TRUSTED_PROXIES", problem: "must be a comma-separated CIDR list, '\(text)' is not a CIDR block")
                }
                return cidr
            }
        }
        if let raw = env["YONA_RATE_LIMIT_PER_CLIENT_PER_MINUTE"] {
            config.rateLimitPerClientPerMinute = try positive(raw, "YONA_RATE_LIMIT_PER_CLIENT_PER_MINUTE")
        }
        if let raw = env["YONA_RATE_LIMIT_PER_NUMBER_PER_HOUR"] {
            config.rateLimitPerNumberPerHour = try positive(raw, "YONA_RATE_LIMIT_PER_NUMBER_PER_HOUR")
        }
        if let raw = env["YONA_BUDDY_REQUESTS_PER_ACCOUNT_PER_DAY"] {
            config.buddyRequestsPerAccountPerDay = try positive(raw, "YONA_BUDDY_REQUESTS_PER_ACCOUNT_PER_DAY")
        }
        if let raw = env["YONA_PHOTO_UPLOADS_PER_ACCOUNT_PER_DAY"] {
            config.photoUploadsPerAccountPerDay = try positive(raw, "YONA_PHOTO_UPLOADS_PER_ACCOUNT_PER_DAY")
        }
        if let raw = env["YONA_DATABASE_READ_DEADLINE_SECONDS"] {
            config.databaseReadDeadline = TimeInterval(try positive(raw, "YONA_DATABASE_READ_DEADLINE_SECONDS"))
        }
        if let raw = env["YONA_CONSOLE_IDLE_SECONDS"] { config.consoleIdleTimeout = TimeInterval(try positive(raw, "YONA_CONSOLE_IDLE_SECONDS")) }
        if let raw = env["YONA_MAX_USERS"] { config.signUp.maxUsers = try positive(raw, "YONA_MAX_USERS") }
        if let raw = env["YONA_WHITE_LIST_FREE_SIGN_UP"] {
            config.signUp.whiteListFreeSignUp = try parseBool(raw, "YONA_WHITE_LIST_FREE_SIGN_UP")
        }
        if let raw = env["YONA_WHITE_LIST_INVITED_USERS"] {
            config.signUp.whiteListInvitedUsers = try parseBool(raw, "YONA_WHITE_LIST_INVITED_USERS")
        }
        if let raw = env["YONA_PUSH_LEASE_SECONDS"] { config.push.leaseSeconds = TimeInterval(try positive(raw, "YONA_PUSH_LEASE_SECONDS")) }
        if let raw = env["YONA_PUSH_BACKOFF_SECONDS"] { config.push.backoffSeconds = TimeInterval(try positive(raw, "YONA_PUSH_BACKOFF_SECONDS")) }
        if let raw = env["YONA_PUSH_MAX_AGE_SECONDS"] { config.push.maxAgeSeconds = TimeInterval(try positive(raw, "YONA_PUSH_MAX_AGE_SECONDS")) }
        if let raw = env["YONA_PUSH_CONCURRENCY"] { config.push.concurrency = try positive(raw, "YONA_PUSH_CONCURRENCY") }
        if let raw = env["YONA_TOKEN_STALE_DAYS"] { config.push.tokenStaleDays = try positive(raw, "YONA_TOKEN_STALE_DAYS") }
        if let raw = env["YONA_PUSH_WORKERS"] { config.push.workersEnabled = try parseBool(raw, "YONA_PUSH_WORKERS") }
        // a production server pushes a device at most every 5 s (issue 34); a test server at once, as Yona did, so that
        // its last-push endpoint shows each push right after the request that caused it
        config.push.minimumIntervalSeconds = config.testServer ? 0 : 5
        if let raw = env["YONA_PUSH_MIN_INTERVAL_SECONDS"] {
            guard let seconds = Int(raw), (0...3600).contains(seconds) else {
                throw Invalid(variable: "YONA_PUSH_MIN_INTERVAL_SECONDS", problem: "must be a whole number of seconds from 0 to 3600, got '\(raw)'")
            }
            config.push.minimumIntervalSeconds = TimeInterval(seconds)
        }
        if let path = env["YONA_FCM_SERVICE_ACCOUNT"], !path.isEmpty {
            config.fcmServiceAccountPath = path
            config.pushProvider = "fcm"
        }
        if let endpoint = env["YONA_FCM_ENDPOINT"] {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw Invalid(variable: "YONA_FCM_ENDPOINT", problem: "must be an absolute http(s) URL")
            }
            config.fcmEndpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        }
        if let pem = env["YONA_FCM_CA"] {
            guard (try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))?.isEmpty == false else {
                throw Invalid(variable: "YONA_FCM_CA", problem: "holds no PEM certificate")
            }
            config.fcmTrustRootsPEM = pem
        }
        if let provider = env["YONA_PUSH_PROVIDER"] {
            guard ["log", "fcm"].contains(provider) else { throw Invalid(variable: "YONA_PUSH_PROVIDER", problem: "must be 'log' or 'fcm'") }
            guard provider == "log" || config.fcmServiceAccountPath != nil else {
                throw Invalid(variable: "YONA_PUSH_PROVIDER", problem: "is 'fcm' but YONA_FCM_SERVICE_ACCOUNT is not set")
            }
            config.pushProvider = provider
        }
        try config.readDirectPush(env)
        config.sms = try SMSSettings.read(env)
        try config.readEmail(env)
        for (variable, system) in [("YONA_MIN_APP_VERSION_ANDROID", OperatingSystem.android), ("YONA_MIN_APP_VERSION_IOS", .ios)] {
            guard let raw = env[variable], !raw.isEmpty else { continue }
            guard let minimum = AppVersionPolicy.parse(raw) else {
                throw Invalid(
                    variable: variable, problem: "must be a version code, optionally with the version name shown, e.g. 218/1.2, got '\(raw)'")
            }
            if system == .android { config.minimumAppVersions.android = minimum } else { config.minimumAppVersions.ios = minimum }
        }
        if let raw = env["YONA_PIN_RESET_DELAY_SECONDS"] {
            guard let value = Int(raw), value >= 0 else {
                throw Invalid(variable: "YONA_PIN_RESET_DELAY_SECONDS", problem: "must be a whole number of seconds, 0 or more, got '\(raw)'")
            }
            config.pinResetDelay = TimeInterval(value)
        }
        if let raw = env["YONA_NEW_DEVICE_REQUEST_LIFETIME_SECONDS"] {
            config.newDeviceRequestLifetime = TimeInterval(try positive(raw, "YONA_NEW_DEVICE_REQUEST_LIFETIME_SECONDS"))
        }
        try config.vpn.read(env)
        switch env["YONA_VPN_ACCOUNTS"] ?? "none" {
        case "none": config.vpnAccounts = nil
        case "ldap":
            func required(_ variable: String) throws(Invalid) -> String {
                guard let value = env[variable], !value.isEmpty else {
                    throw Invalid(variable: variable, problem: "must be set when YONA_VPN_ACCOUNTS is 'ldap'")
                }
                return value
            }
            let url = try required("YONA_LDAP_URL")
            guard url.hasPrefix("ldap://") || url.hasPrefix("ldaps://") || url.hasPrefix("ldapi://") else {
                throw Invalid(variable: "YONA_LDAP_URL", problem: "must be an ldap://, ldaps:// or ldapi:// URL")
            }
            var settings = LDAPSettings(
                url: url, baseDN: try required("YONA_LDAP_BASE_DN"), bindDN: try required("YONA_LDAP_BIND_DN"),
                bindPassword: try required("YONA_LDAP_BIND_PASSWORD"))
            if let ou = env["YONA_LDAP_ACCOUNTS_OU"], !ou.isEmpty { settings.accountsOU = ou }
            config.vpnAccounts = settings
        default:
            throw Invalid(variable: "YONA_VPN_ACCOUNTS", problem: "must be 'none' or 'ldap'")
        }
        // Invitation links carry a temporary password and leave by SMS: built from the request's Host header they
        // could point anywhere a caller likes (issue 13, attack 5).
        if config.sms != .log || config.email != .log, config.publicBaseURL == nil {
            throw Invalid(
                variable: "YONA_PUBLIC_BASE_URL",
                problem: "must be set when texts or mails are sent (YONA_SMS_PROVIDER, YONA_EMAIL_PROVIDER): invitation links are built from it")
        }
        return config
    }

    private static func positive(_ raw: String, _ name: String) throws(Invalid) -> Int {
        guard let value = Int(raw), value > 0 else { throw Invalid(variable: name, problem: "must be a positive integer, got '\(raw)'") }
        return value
    }

    package static func parseDatabaseURL(_ raw: String) throws(Invalid) -> DatabaseTarget {
        if raw.hasPrefix("sqlite://") {
            let path = String(raw.dropFirst("sqlite://".count))
            guard !path.isEmpty, !path.hasSuffix("/") else {
                throw Invalid(variable: "YONA_DATABASE_URL", problem: "needs a file path, e.g. sqlite://./data/yona.sqlite")
            }
            return .sqlite(path: path)
        }
        if raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") {
            guard let url = URL(string: raw), url.host != nil, url.path.count > 1 else {
                throw Invalid(variable: "YONA_DATABASE_URL", problem: "must look like postgres://user:pass@host:port/db")
            }
            return .postgres(url: raw)
        }
        throw Invalid(variable: "YONA_DATABASE_URL", problem: "must start with sqlite:// or postgres://")
    }

    /// Whether a listener on `host` can be reached only from this machine.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    package static func parseBool(_ raw: String, _ name: String) throws(Invalid) -> Bool {
        switch raw.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no", "": return false
        default: throw Invalid(variable: name, problem: "must be true or false, got '\(raw)'")
        }
    }
}
