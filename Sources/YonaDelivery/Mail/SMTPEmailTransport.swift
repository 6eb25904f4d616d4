import CCurl
import Foundation
import Logging
import NIOPosix

/// Sends mail to an SMTP relay through the system's libcurl (docs/decisions.md "E-mail over SMTP through libcurl"):
/// `smtp://host:port` upgrades with STARTTLS and refuses to go on without it, `smtps://host:port` speaks TLS from the
/// first byte; nothing, neither the credentials nor a mail, is ever sent in plaintext. The relay's 4xx answers are
/// tried again later, 5xx refused for good (550-553 on the recipient: a dead address); a relay without STARTTLS, a
/// refused login and a certificate that does not verify say our set-up is wrong.
package struct SMTPEmailTransport: EmailTransport {
    package struct Settings: Sendable, Equatable {
        package var url: String
        package var username: String?
        package var password: String?
        package var fromAddress: String
        /// The trust roots (PEM certificates) for the relay's certificate, instead of the system's (a private relay's CA).
        package var trustRootsPEM: String?
        package var timeoutSeconds = 30

        package init(url: String, username: String?, password: String?, fromAddress: String, trustRootsPEM: String?, timeoutSeconds: Int = 30) {
            self.url = url
            self.username = username
            self.password = password
            self.fromAddress = fromAddress
            self.trustRootsPEM = trustRootsPEM
            self.timeoutSeconds = timeoutSeconds
        }
    }

    package let settings: Settings
    package let logger: Logger
    package var name: String { "smtp" }

    package init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        _ = Self.globalInit
    }

    /// libcurl's process-wide set-up, once, before any thread uses it.
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    package func deliver(_ email: Email) async -> DeliveryOutcome {
        let recipient = Email.mailbox(email.to).address
        guard Self.isPlainAddress(recipient), Self.isPlainAddress(settings.fromAddress) else { return .deadAddress("SMTP_BAD_ADDRESS") }
        let message = MIMEMessage.render(email, fromAddress: settings.fromAddress)
        let settings = self.settings
        let outcome: DeliveryOutcome
        do {
            // libcurl blocks: on a thread of NIO's pool, never on the cooperative pool.
            outcome = try await NIOThreadPool.singleton.runIfActive { Self.send(message, to: recipient, settings: settings) }
        } catch {
            outcome = .retry("SMTP_NO_THREAD")
        }
        if outcome == .delivered {
            logger.info("email: sent", metadata: ["email_provider": "smtp"])
        } else {
            logger.warning("email: not sent", metadata: ["email_provider": "smtp", "error_code": .string(outcome.code ?? "")])
        }
        return outcome
    }

    /// An address that can stand in an SMTP command as it is: printable ASCII, no space, no angle brackets, one `@`.
    private static func isPlainAddress(_ address: String) -> Bool {
        address.utf8.count <= 254 && address.split(separator: "@", omittingEmptySubsequences: false).count == 2
            && address.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" }
    }

    /// The message being uploaded as DATA, read by libcurl's callback.
    private final class Upload {
        let bytes: [UInt8]
        var offset = 0
        init(_ data: Data) { bytes = Array(data) }
    }

    private static func send(_ message: Data, to recipient: String, settings: Settings) -> DeliveryOutcome {
        guard let handle = curl_easy_init() else { return .retry("SMTP_CURL_INIT") }
        defer { curl_easy_cleanup(handle) }
        let upload = Upload(message)
        let recipients = curl_slist_append(nil, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }
        let domain = settings.fromAddress.split(separator: "@").last.map(String.init) ?? "localhost"
        // The URL's path is the name we greet with (EHLO); the host's own name says nothing to the relay.
        let url = settings.url.hasSuffix("/") ? settings.url + domain : settings.url + "/" + domain
        yona_curl_set_string(handle, CURLOPT_URL, url)
        yona_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,smtps")
        yona_curl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
        yona_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        yona_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        yona_curl_set_long(handle, CURLOPT_TIMEOUT, settings.timeoutSeconds)
        if let pem = settings.trustRootsPEM {
            // In memory, not a path: the setting may come from a mounted secret (`YONA_SMTP_CA_FILE`) or the variable.
            Array(pem.utf8).withUnsafeBytes { _ = yona_curl_set_blob(handle, CURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count) }
        }
        if let username = settings.username { yona_curl_set_string(handle, CURLOPT_USERNAME, username) }
        if let password = settings.password { yona_curl_set_string(handle, CURLOPT_PASSWORD, password) }
        yona_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(settings.fromAddress)>")
        yona_curl_set_pointer(handle, CURLOPT_MAIL_RCPT, UnsafeMutableRawPointer(recipients))
        yona_curl_set_long(handle, CURLOPT_UPLOAD, 1)
        yona_curl_set_read_function(handle) { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let upload = Unmanaged<Upload>.fromOpaque(context).takeUnretainedValue()
            let length = min(size * count, upload.bytes.count - upload.offset)
            upload.bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + upload.offset, byteCount: length)
            }
            upload.offset += length
            return length
        }
        let result = withExtendedLifetime(upload) {
            yona_curl_set_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque())
            return curl_easy_perform(handle)
        }
        var reply = 0
        yona_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &reply)
        return outcome(result, reply: reply)
    }

    /// libcurl's result and the relay's last reply code in the outbox's terms.
    package static func outcome(_ result: CURLcode, reply: Int) -> DeliveryOutcome {
        switch result {
        case CURLE_OK: return .delivered
        case CURLE_USE_SSL_FAILED: return .misconfigured("SMTP_NO_STARTTLS")
        case CURLE_LOGIN_DENIED: return .misconfigured("SMTP_AUTH")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE: return .misconfigured("SMTP_TLS_VERIFY")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return .misconfigured("SMTP_URL")
        default: break
        }
        switch reply {
        case 530, 534, 535, 538: return .misconfigured("SMTP_\(reply)")
        case 550, 551, 553: return .deadAddress("SMTP_\(reply)")
        case 500..<600: return .rejected("SMTP_\(reply)")
        case 400..<500: return .retry("SMTP_\(reply)")
        default: return .retry("SMTP_CURL_\(result.rawValue)")
        }
    }
}
