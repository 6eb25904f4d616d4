import Foundation

/// An `Email` as an Internet message (RFC 5322 with MIME): Date, Message-ID, UTF-8 headers as RFC 2047 encoded
/// words, and a `multipart/alternative` of the text and the HTML, each base64 (no line is ever too long, whatever a
/// name holds). Lines end in CRLF, as SMTP's DATA wants them.
package enum MIMEMessage {
    package static func render(_ email: Email, fromAddress: String, date: Date = Date(), id: UUID = UUID()) -> Data {
        let from = Email.mailbox(email.from)
        let to = Email.mailbox(email.to)
        let domain = fromAddress.split(separator: "@").last.map(String.init) ?? "localhost"
        let boundary = "yona-\(id.uuidString.lowercased())"
        var headers = [
            "Date: \(rfc5322Date(date))",
            "From: \(mailbox(name: from.name, address: fromAddress))",
            "To: \(mailbox(name: to.name, address: to.address))",
            "Subject: \(encodedWords(email.subject))",
            "Message-ID: <\(id.uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
        ]
        var lines: [String]
        if let text = email.text {
            headers.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines = headers + [""]
            for (type, content) in [("text/plain", text), ("text/html", email.body)] {
                lines += ["--\(boundary)"] + part(type, content)
            }
            lines += ["--\(boundary)--", ""]
        } else {
            lines = headers + part("text/html", email.body)
        }
        return Data(lines.joined(separator: "\r\n").utf8)
    }

    private static func part(_ type: String, _ content: String) -> [String] {
        let encoded = Data(content.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        return ["Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: base64", "", encoded]
    }

    private static func mailbox(name: String, address: String) -> String {
        name.isEmpty ? "<\(address)>" : "\(encodedWords(name)) <\(address)>"
    }

    /// A header value as it is when it is plain ASCII words, else as RFC 2047 `=?UTF-8?B?…?=` words of at most 45
    /// bytes each (75 characters encoded), folded onto lines of their own; a character is never split.
    package static func encodedWords(_ value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy {
            $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F && !"\"<>()@,;:\\[]=?".unicodeScalars.contains($0)
        }
        if plain && value.utf8.count <= 200 && !value.contains("  ") { return value }
        var words: [String] = []
        var chunk = Data()
        for character in value {
            let bytes = Data(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(chunk.base64EncodedString())?=")
                chunk = Data()
            }
            chunk.append(bytes)
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(chunk.base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    private static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
