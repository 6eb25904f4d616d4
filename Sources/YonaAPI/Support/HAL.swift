import Foundation
import Vapor
import YonaDomain

/// A HAL link.
package struct HALLink: Encodable, Sendable {
    package let href: String
    package var templated: Bool? = nil
}

/// `_links` of a resource, in insertion order; top-level resources also carry the `yona` curie.
package struct HALLinks: Encodable, Sendable {
    private var links: [(rel: String, link: HALLink)] = []
    private let topLevel: Bool

    package init(self href: String, topLevel: Bool = true) {
        self.topLevel = topLevel
        add("self", href)
    }

    /// Links of a nested object that is not a resource of its own (no `self`, no curie), as Yona's report parts.
    package init() {
        topLevel = false
    }

    /// Links of a top-level document that has no `self` of its own (Yona's photo upload answer): the curie only.
    package static func withoutSelf() -> HALLinks { HALLinks(topLevel: true) }

    private init(topLevel: Bool) {
        self.topLevel = topLevel
    }

    package mutating func add(_ rel: String, _ href: String) {
        links.append((rel, HALLink(href: href)))
    }

    /// The links of page `number` of `totalPages` as Spring Data's `PagedResourcesAssembler` wrote them behind Yona's
    /// paged resources (messages, reports): `first` and `last` only when there is another page to go to, `prev` on every
    /// page after the first (one back, also past the end), `next` while a later page exists.
    package static func paged(_ number: Int, of totalPages: Int, href: (Int) -> String) -> HALLinks {
        var links = HALLinks(self: href(number))
        let hasPrevious = number > 0
        let hasNext = number + 1 < totalPages
        if hasPrevious || hasNext { links.add("first", href(0)) }
        if hasPrevious { links.add("prev", href(number - 1)) }
        if hasNext { links.add("next", href(number + 1)) }
        if hasPrevious || hasNext { links.add("last", href(max(totalPages - 1, 0))) }
        return links
    }

    private struct Key: CodingKey {
        package let stringValue: String
        package init(_ string: String) { stringValue = string }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package var intValue: Int? { nil }
        package init?(intValue: Int) { nil }
    }

    private struct Curie: Encodable {
        package let name = "yona"
        package let href = "http://dev.yona.nu/rels/{rel}"
        package let templated = true
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (rel, link) in links { try container.encode(link, forKey: Key(rel)) }
        if topLevel { try container.encode([Curie()], forKey: Key("curies")) }
    }
}

/// A HAL collection: `{"_embedded": {"<rel>": [...]}, "_links": {"self": ...}}`.
package struct HALCollection<Item: Encodable & Sendable>: Encodable, Sendable {
    package let rel: String
    package let items: [Item]
    package let links: HALLinks

    private struct Key: CodingKey {
        package let stringValue: String
        package init(_ string: String) { stringValue = string }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package var intValue: Int? { nil }
        package init?(intValue: Int) { nil }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        var embedded = container.nestedContainer(keyedBy: Key.self, forKey: Key("_embedded"))
        try embedded.encode(items, forKey: Key(rel))
        try container.encode(links, forKey: Key("_links"))
    }
}

/// The one builder of every URL the server hands out.
package struct LinkBuilder: Sendable {
    package let base: String

    package init(request: Request, publicBaseURL: String?) {
        if let publicBaseURL {
            base = publicBaseURL
        } else {
            let host = request.headers.first(name: .host) ?? "localhost"
            base = "http://\(host)"
        }
    }

    package func user(_ userID: UUID) -> String { "\(base)/users/\(userID.lowercasedString)" }

    package func user(_ userID: UUID, requestingUserID: UUID, requestingDeviceID: UUID?) -> String {
        var href = "\(user(userID))?requestingUserId=\(requestingUserID.lowercasedString)"
        if let requestingDeviceID { href += "&requestingDeviceId=\(requestingDeviceID.lowercasedString)" }
        return href
    }

    /// The link an invitee's app opens: the user with the temporary password that unlocks it.
    package func invitation(_ userID: UUID, temporaryPassword: String) -> String {
        let unreserved = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let encoded = temporaryPassword.addingPercentEncoding(withAllowedCharacters: unreserved) ?? temporaryPassword
        return "\(user(userID, requestingUserID: userID, requestingDeviceID: nil))&tempPassword=\(encoded)"
    }

    /// The user's edit link: Yona's carries the requesting device.
    package func user(_ userID: UUID, requestingDeviceID: UUID?) -> String { withRequestingDevice(user(userID), requestingDeviceID) }

    /// `href` with `requestingDeviceId` appended when a requesting device is known.
    package func withRequestingDevice(_ href: String, _ requestingDeviceID: UUID?) -> String {
        guard let requestingDeviceID else { return href }
        return Self.appending("requestingDeviceId", requestingDeviceID, to: href)
    }

    private static func appending(_ name: String, _ id: UUID, to href: String) -> String {
        href + (href.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + "\(name)=\(id.lowercasedString)"
    }

    package func dailyActivityReports(_ userID: UUID) -> String { "\(user(userID))/activity/days/" }
    package func weeklyActivityReports(_ userID: UUID) -> String { "\(user(userID))/activity/weeks/" }
    package func dailyActivityReportsWithBuddies(_ userID: UUID) -> String { "\(user(userID))/activity/withBuddies/days/" }
    package func editUserPhoto(_ userID: UUID) -> String { "\(user(userID))/photo" }
    /// Where anyone holding it downloads a photo (no password: the id is the key).
    package func userPhoto(_ photoID: UUID) -> String { "\(base)/userPhotos/\(photoID.lowercasedString)" }
    package func pinResetRequest(_ userID: UUID) -> String { "\(user(userID))/pinResetRequest/request" }
    package func ovpnProfile() -> String { "\(base)/vpn/profile.ovpn" }
    package func sslRootCertificate() -> String { "\(base)/ssl/rootcert.cer" }

    package func confirmMobileNumber(_ userID: UUID) -> String { "\(user(userID))/confirmMobileNumber" }
    package func resendConfirmationCode(_ userID: UUID) -> String { "\(user(userID))/resendMobileNumberConfirmationCode" }
    package func messages(_ userID: UUID) -> String { "\(user(userID))/messages/" }
    package func devices(_ userID: UUID) -> String { "\(user(userID))/devices/" }
    package func device(_ userID: UUID, _ deviceID: UUID) -> String { "\(devices(userID))\(deviceID.lowercasedString)" }
    package func message(_ userID: UUID, _ messageID: Int64) -> String { "\(messages(userID))\(messageID)" }
    package func goals(_ userID: UUID) -> String { "\(user(userID))/goals/" }
    package func buddies(_ userID: UUID) -> String { "\(user(userID))/buddies/" }
    package func buddy(_ userID: UUID, _ buddyID: UUID) -> String { "\(buddies(userID))\(buddyID.lowercasedString)" }

    /// A link the requester follows to another user's resource (a buddy's user or goals), as Yona gives it.
    package func asRequester(_ href: String, _ requestingUserID: UUID) -> String {
        Self.appending("requestingUserId", requestingUserID, to: href)
    }

    package func goal(_ userID: UUID, _ goalID: UUID) -> String { "\(goals(userID))\(goalID.lowercasedString)" }
    package func activityCategories() -> String { "\(base)/activityCategories/" }
    package func activityCategory(_ id: UUID) -> String { "\(activityCategories())\(id.lowercasedString)" }
    package func adminActivityCategories() -> String { "\(base)/admin/activityCategories/" }
    package func adminActivityCategory(_ id: UUID) -> String { "\(adminActivityCategories())\(id.lowercasedString)" }

    package func newDeviceRequest(_ mobileNumber: String) -> String {
        let encoded = mobileNumber.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? mobileNumber
        return "\(base)/newDeviceRequests/\(encoded)"
    }
}

extension Response {
    /// A HAL response with the given status. The document is written in one pass (`CompactJSONEncoder`); what that
    /// encoder leaves to Foundation goes through `JSONEncoder`.
    package static func hal<T: Encodable>(_ value: T, status: HTTPResponseStatus = .ok) throws -> Response {
        let response = Response(status: status)
        response.headers.replaceOrAdd(name: .contentType, value: "application/hal+json")
        if let bytes = CompactJSONEncoder.encode(value) {
            #if DEBUG
                // Every document the test suite renders is checked against Foundation's.
                let foundation = try CompactJSONEncoder.fallback.encode(value)
                if try CompactJSONEncoder.canonical(Data(bytes)) != CompactJSONEncoder.canonical(foundation) {
                    preconditionFailure(
                        "CompactJSONEncoder wrote \(String(decoding: bytes, as: UTF8.self)) for \(String(decoding: foundation, as: UTF8.self))")
                }
            #endif
            response.body = .init(buffer: ByteBuffer(bytes: bytes))
        } else {
            response.body = .init(data: try CompactJSONEncoder.fallback.encode(value))
        }
        return response
    }
}

/// HAL documents are `application/hal+json` (api.md), but a client that asks for `application/json` and not for
/// HAL gets them labelled so, as Yona served them (its test client and the apps send `Accept: application/json`).
/// The body is the same either way.
package enum HALContentNegotiation {
    package static func relabel(_ response: Response, for request: Request) {
        guard response.headers.first(name: .contentType) == "application/hal+json", wantsPlainJSON(request.headers[.accept]) else {
            return
        }
        response.headers.replaceOrAdd(name: .contentType, value: "application/json")
    }

    /// Whether the Accept header names `application/json` and not `application/hal+json`.
    package static func wantsPlainJSON(_ accept: [String]) -> Bool {
        let types = accept.flatMap { $0.split(separator: ",") }.map {
            $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
        return types.contains("application/json") && !types.contains("application/hal+json")
    }
}
