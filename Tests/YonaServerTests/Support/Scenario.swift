import Foundation
import NIOCore
import Testing

@testable import YonaAPI
@testable import YonaServer

/// A user as a test knows it after creating it through the API.
struct TestUser: Sendable {
    let id: String
    let password: String
    let mobileNumber: String
    let firstName: String
    let nickname: String

    var passwordHeader: [(String, String)] { [("Yona-Password", password)] }
    var path: String { "/users/\(id)" }
    var profilePath: String { "/users/\(id)?requestingUserId=\(id)" }
}

/// A distinctive random number in the Dutch mobile range, so parallel tests never collide.
func randomMobileNumber() -> String {
    "+316" + String(format: "%08u", UInt32.random(in: 0..<100_000_000))
}

extension APIDriving {
    /// Creates (and by default confirms) a user with distinctive names.
    func createUser(
        firstName: String = "Fn\(UInt32.random(in: 100_000...999_999))",
        nickname: String = "Nick\(UInt32.random(in: 100_000...999_999))",
        mobileNumber: String = randomMobileNumber(), extra: [String: Any] = [:],
        confirm: Bool = true
    ) async throws -> TestUser {
        var body: [String: Any] = [
            "firstName": firstName, "lastName": "Ln\(firstName)", "nickname": nickname,
            "mobileNumber": mobileNumber,
        ]
        body.merge(extra) { $1 }
        let created = try await request(.POST, "/users/", json: body)
        try #require(created.status == 201, "create: \(created.text)")
        let user = TestUser(
            id: try #require(
                created.json["_links"].flatMap { value($0, "self", "href") as? String }
                    .flatMap { URLComponents(string: $0)?.path.split(separator: "/").last.map(String.init) }),
            password: try #require(created.json["yonaPassword"] as? String),
            mobileNumber: mobileNumber, firstName: firstName, nickname: nickname)
        if confirm {
            let confirmed = try await request(
                .POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader,
                json: ["code": "1234"])
            try #require(confirmed.status == 200, "confirm: \(confirmed.text)")
        }
        return user
    }
}

extension APIDriving {
    /// The anonymized id and device index of a user's first device, as the classifier is configured with them.
    func vpnLogin(_ user: TestUser, device: Int = 0) async throws -> (userAnonymizedID: String, deviceIndex: Int) {
        let profile = try await request(.GET, user.profilePath, headers: user.passwordHeader)
        let login = try #require(
            value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", device, "vpnProfile", "vpnLoginID") as? String)
        let parts = login.split(separator: "$")
        return (String(parts[0]), Int(parts[1])!)
    }

    /// Adds a no-go goal that has existed since `since`. Gambling's is mandatory: every user has it from the start
    /// (dated 2017, as Yona), so there is nothing to add.
    func addNoGoGoal(_ user: TestUser, category: String, since: Date = Date().addingTimeInterval(-86_400)) async throws {
        if category == GoalsTests.gambling { return }
        let response = try await request(
            .POST, "\(user.path)/goals/", headers: user.passwordHeader,
            json: [
                "@type": "BudgetGoal", "maxDurationMinutes": 0, "creationTime": YonaDateFormat.timestamp(since),
                "_links": ["yona:activityCategory": ["href": "\(baseURL)/activityCategories/\(category)"]],
            ])
        try #require(response.status == 201, "goal: \(response.text)")
    }

    /// Posts what the classifier saw.
    @discardableResult
    func postNetworkActivity(
        _ userAnonymizedID: String, deviceIndex: Int = 0, categories: [String], url: String,
        at time: Date? = nil, idempotencyKey: String? = nil, bearer: [(String, String)] = TestServer.bearer,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> APIResponse {
        var body: [String: Any] = ["deviceIndex": deviceIndex, "categories": categories, "url": url]
        if let time { body["eventTime"] = YonaDateFormat.timestamp(time) }
        var headers = bearer
        if let idempotencyKey { headers.append(("Idempotency-Key", idempotencyKey)) }
        return try await request(.POST, "/userAnonymized/\(userAnonymizedID)/networkActivity/", headers: headers, json: body, timeout: timeout)
    }

    /// The user's messages, newest first.
    func messages(_ user: TestUser, query: String = "") async throws -> [[String: Any]] {
        let page = try await request(.GET, "\(user.path)/messages/\(query)", headers: user.passwordHeader)
        try #require(page.status == 200, "messages: \(page.text)")
        return value(page.json, "_embedded", "yona:messages") as? [[String: Any]] ?? []
    }
}
