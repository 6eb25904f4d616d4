import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// What Yona's own integration tests assert about every user and device document (their
/// `CommonAssertions.groovy`), restated as checks on the JSON an app receives. The Yona apps read exactly this.
enum YonaAssertions {
    static let uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"

    static let userToBeConfirmedProperties: Set<String> = [
        "mobileNumber", "creationTime", "_links", "firstName", "lastName", "nickname", "yonaPassword", "appLastOpenedDate",
    ]
    static let userConfirmedProperties = userToBeConfirmedProperties.union(["_embedded"])
    static let userToBeConfirmedLinks: Set<String> = [
        "self", "curies", "yona:confirmMobileNumber", "yona:resendMobileNumberConfirmationCode", "edit",
    ]
    static let userConfirmedLinks: Set<String> = [
        "self", "curies", "edit", "yona:messages", "yona:dailyActivityReports", "yona:weeklyActivityReports",
        "yona:dailyActivityReportsWithBuddies", "yona:newDeviceRequest", "yona:editUserPhoto", "yona:requestPinReset",
    ]
    static let userEmbedded: Set<String> = ["yona:devices", "yona:goals", "yona:buddies"]

    /// `assertUser(json, skipPropertySetAssertion: false)`: the own user as the app gets it from create, confirm,
    /// update and get.
    static func assertUser(_ user: [String: Any], defaultDevice: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(value(user, "_links", "self", "href") is String, sourceLocation: sourceLocation)
        #expect(user["creationTime"] is String, sourceLocation: sourceLocation)
        #expect(user["appLastOpenedDate"] is String, sourceLocation: sourceLocation)
        #expect((user["mobileNumber"] as? String)?.wholeMatch(of: /\+[0-9]+/) != nil, sourceLocation: sourceLocation)
        #expect(user["nickname"] is String && user["firstName"] is String && user["lastName"] is String, sourceLocation: sourceLocation)
        #expect((user["yonaPassword"] as? String)?.hasPrefix("AES:128:") == true, sourceLocation: sourceLocation)
        let toBeConfirmed = value(user, "_links", "yona:confirmMobileNumber", "href") != nil
        for rel in ["yona:buddies", "yona:goals", "yona:devices"] {
            #expect(toBeConfirmed != (value(user, "_embedded", rel, "_links", "self", "href") != nil), "\(rel)", sourceLocation: sourceLocation)
        }
        #expect(toBeConfirmed != (value(user, "_links", "yona:messages") != nil), sourceLocation: sourceLocation)
        #expect(toBeConfirmed != (value(user, "_links", "yona:newDeviceRequest") != nil), sourceLocation: sourceLocation)
        #expect(Set(user.keys) == (toBeConfirmed ? userToBeConfirmedProperties : userConfirmedProperties), sourceLocation: sourceLocation)
        let links = Set((user["_links"] as? [String: Any] ?? [:]).keys).subtracting(["yona:userPhoto"])
        #expect(links == (toBeConfirmed ? userToBeConfirmedLinks : userConfirmedLinks), sourceLocation: sourceLocation)
        if toBeConfirmed {
            #expect(user["_embedded"] == nil, sourceLocation: sourceLocation)
        } else {
            #expect(Set((user["_embedded"] as? [String: Any] ?? [:]).keys) == userEmbedded, sourceLocation: sourceLocation)
        }
        let selfHref = value(user, "_links", "self", "href") as? String ?? ""
        #expect(
            selfHref.wholeMatch(of: try! Regex("(?i)^.*/\(uuid)\\?requestingUserId=\(uuid)&requestingDeviceId=\(uuid)$")) != nil,
            "self: \(selfHref)", sourceLocation: sourceLocation)
        if !toBeConfirmed && defaultDevice {
            let devices = value(user, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? []
            #expect(devices.count == 1, sourceLocation: sourceLocation)
            if let device = devices.first { assertDefaultOwnDevice(device, sourceLocation: sourceLocation) }
        }
    }

    /// `assertDefaultOwnDevice`: the name the app gave (or the default), dates, VPN status and profile.
    static func assertDefaultOwnDevice(_ device: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        switch device["operatingSystem"] as? String {
        case "UNKNOWN": #expect(device["name"] as? String == "First device", sourceLocation: sourceLocation)
        case "IOS": #expect((device["name"] as? String)?.hasSuffix("'s iPhone") == true, sourceLocation: sourceLocation)
        case "ANDROID": #expect((device["name"] as? String)?.hasSuffix("'s S8") == true, sourceLocation: sourceLocation)
        default: Issue.record("operating system \(String(describing: device["operatingSystem"]))", sourceLocation: sourceLocation)
        }
        #expect(
            (device["registrationTime"] as? String)?.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\+\d{4}/) != nil,
            sourceLocation: sourceLocation)
        #expect((device["appLastOpenedDate"] as? String)?.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil, sourceLocation: sourceLocation)
        #expect(device["vpnConnected"] is Bool, sourceLocation: sourceLocation)
        #expect(
            (value(device, "vpnProfile", "vpnLoginID") as? String)?.wholeMatch(of: try! Regex("(?i)^\(uuid)\\$[0-9]+$")) != nil,
            sourceLocation: sourceLocation)
        #expect((value(device, "vpnProfile", "vpnPassword") as? String)?.count == 32, sourceLocation: sourceLocation)
        #expect(value(device, "vpnProfile", "_links", "yona:ovpnProfile", "href") is String, sourceLocation: sourceLocation)
    }

    /// The value of a query parameter of an href.
    static func query(_ href: String?, _ name: String) -> String? {
        href.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == name }?.value }
    }

    /// An href without its query, as Yona's tests compare them.
    static func stripped(_ href: String?) -> String? {
        href.map { String($0.split(separator: "?", maxSplits: 1).first ?? "") }
    }

    /// Today as the user sees it (Yona's default zone).
    static var today: String { UserCalendar.day(Date()) }
}

/// A Yona app: it knows only the links it was given and the password, as the Groovy `User` object does.
struct YonaApp {
    let server: TestServer
    let json: [String: Any]
    let password: String

    var url: String { value(json, "_links", "self", "href") as! String }
    var headers: [(String, String)] { [("Yona-Password", password)] }
    var requestingDeviceID: String? { YonaAssertions.query(url, "requestingDeviceId") }
    var devices: [[String: Any]] { value(json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? [] }
    var requestingDevice: [String: Any]? { devices.first { $0["requestingDevice"] as? Bool == true } }
    var goals: [[String: Any]] { value(json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [[String: Any]] ?? [] }
    func link(_ rel: String) -> String? { value(json, "_links", rel, "href") as? String }

    /// `appService.addUser` (+ confirm with the test server's code, as `addRichard` does).
    static func add(
        _ server: TestServer, firstName: String, nickname: String, device: [String: Any] = [:],
        confirm: Bool = true
    ) async throws -> YonaApp {
        var body: [String: Any] = ["firstName": firstName, "lastName": "Quinn", "nickname": nickname, "mobileNumber": randomMobileNumber()]
        body.merge(device) { $1 }
        let created = try await server.request(.POST, "/users/", json: body)
        try #require(created.status == 201, "\(created.text)")
        let app = YonaApp(server: server, json: created.json, password: created.json["yonaPassword"] as! String)
        return confirm ? try await app.confirm() : app
    }

    /// Follows `yona:confirmMobileNumber` with the test server's code.
    func confirm() async throws -> YonaApp {
        let confirmed = try await server.request(.POST, try #require(link("yona:confirmMobileNumber")), headers: headers, json: ["code": "1234"])
        try #require(confirmed.status == 200, "\(confirmed.text)")
        return YonaApp(server: server, json: confirmed.json, password: password)
    }

    /// `reloadUser`: GET of the stored `self` link.
    func reload() async throws -> YonaApp {
        let reloaded = try await server.request(.GET, url, headers: headers)
        try #require(reloaded.status == 200, "\(reloaded.text)")
        return YonaApp(server: server, json: reloaded.json, password: password)
    }
}
