import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// Yona's `VpnConnectionStatusEventTest`: the app reports its VPN up or down through the requesting device's
/// `yona:postVpnStatusEvent` link; the device and the buddy's view of it show `vpnConnected`; each change (never a
/// repeat) reaches every buddy as a `BuddyVpnConnectionStatusChangeMessage`.
@Suite struct YonaVPNStatusFeatureTests {
    typealias B = YonaBuddyFeatureTests

    /// Richard (on "Richard's iPhone") and Bob as buddies, Bob's inbox processed once.
    static func richardAndBob(_ server: TestServer) async throws -> (richard: TestUser, bob: TestUser) {
        let richard = try await server.createUser(firstName: "Richard", nickname: "RQ", extra: YonaActivityFeatureTests.iPhone)
        let bob = try await server.createUser(firstName: "Bob", nickname: "BD")
        try await BuddyTests.connect(server, richard: richard, bob: bob)
        _ = try await server.messages(richard)
        return (richard, bob)
    }

    /// The user's devices as the profile lists them with `device` as the requesting one.
    static func devices(_ server: TestServer, _ user: TestUser) async throws -> [[String: Any]] {
        let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
        return value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? []
    }

    /// Posts the VPN state through the link the device carries when it is the requesting one, with the body
    /// Yona's test client sends (the flag as a string).
    static func postVPNStatus(_ server: TestServer, _ user: TestUser, device name: String, _ connected: Bool) async throws -> APIResponse {
        let devices = try await devices(server, user)
        let device = try #require(devices.first { $0["name"] as? String == name })
        let selfHref = try #require(value(device, "_links", "self", "href") as? String)
        let deviceID = try #require(URLComponents(string: selfHref)?.path.split(separator: "/").last.map(String.init))
        let asRequesting = try await server.request(
            .GET, "\(user.path)/devices/\(deviceID)?requestingDeviceId=\(deviceID)", headers: user.passwordHeader)
        let href = try #require(value(asRequesting.json, "_links", "yona:postVpnStatusEvent", "href") as? String)
        return try await server.request(.POST, href, headers: user.passwordHeader, body: Data(#"{"vpnConnected":"\#(connected)"}"#.utf8))
    }

    /// Bob's view of Richard's devices: name → `vpnConnected`.
    static func buddyDevices(_ server: TestServer, _ bob: TestUser) async throws -> [String: Bool] {
        let entry = try await B.buddyEntry(server, bob)
        let devices = value(entry, "_embedded", "yona:user", "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? []
        return Dictionary(devices.compactMap { device in (device["name"] as? String).map { ($0, device["vpnConnected"] as? Bool ?? false) } }) {
            a, _ in a
        }
    }

    static func ownDevices(_ server: TestServer, _ user: TestUser) async throws -> [String: Bool] {
        Dictionary(
            try await devices(server, user).compactMap { device in (device["name"] as? String).map { ($0, device["vpnConnected"] as? Bool ?? false) }
            }
        ) { a, _ in a }
    }

    static func vpnMessages(_ server: TestServer, _ bob: TestUser) async throws -> [[String: Any]] {
        try await B.messages(server, bob, type: "BuddyVpnConnectionStatusChangeMessage")
    }

    @Test(
        "VpnConnectionStatusEventTest: Richard posts initial VPN connected event; then a VPN disconnected event: connection status updated and buddies informed",
        arguments: TestDatabase.available)
    func connectThenDisconnect(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.richardAndBob(server)
            #expect(try await Self.ownDevices(server, richard) == ["Richard's iPhone": false])
            #expect(try await Self.buddyDevices(server, bob) == ["Richard's iPhone": false])

            let connected = try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", true)
            #expect(connected.status == 204, "\(connected.text)")
            #expect(try await Self.ownDevices(server, richard) == ["Richard's iPhone": true])
            #expect(try await Self.buddyDevices(server, bob) == ["Richard's iPhone": true])
            let first = try await Self.vpnMessages(server, bob)
            #expect(first.count == 1)
            #expect(B.linkSet(first.first).subtracting(["curies"]) == ["self", "edit", "yona:buddy", "yona:user", "yona:markRead"])
            #expect(first.first?["message"] as? String == "User connected VPN on device 'Richard's iPhone'")
            let bobsBuddyUser = value(try await B.buddyEntry(server, bob), "_embedded", "yona:user", "_links", "self", "href") as? String
            #expect(value(first.first, "_links", "yona:user", "href") as? String == bobsBuddyUser)
            #expect(first.first?["nickname"] as? String == "RQ")

            let disconnected = try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", false)
            #expect(disconnected.status == 204, "\(disconnected.text)")
            #expect(try await Self.ownDevices(server, richard) == ["Richard's iPhone": false])
            #expect(try await Self.buddyDevices(server, bob) == ["Richard's iPhone": false])
            let both = try await Self.vpnMessages(server, bob)
            #expect(
                both.map { $0["message"] as? String } == [
                    "User disconnected VPN on device 'Richard's iPhone'", "User connected VPN on device 'Richard's iPhone'",
                ])
        }
    }

    @Test(
        "VpnConnectionStatusEventTest: Richard posts second VPN disconnected event; second VPN connected event: no message to buddies",
        arguments: TestDatabase.available)
    func repeatsAreNotAnnounced(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.richardAndBob(server)
            // a disconnect while never connected changes nothing
            #expect(try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", false).status == 204)
            #expect(try await Self.vpnMessages(server, bob).isEmpty)
            #expect(try await Self.ownDevices(server, richard) == ["Richard's iPhone": false])
            // a second connect after the first is not announced again
            #expect(try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", true).status == 204)
            #expect(try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", true).status == 204)
            #expect(try await Self.vpnMessages(server, bob).count == 1)
            #expect(try await Self.buddyDevices(server, bob) == ["Richard's iPhone": true])
        }
    }

    @Test(
        "VpnConnectionStatusEventTest: Richard has two devices and juggles the VPN on them: buddies get notifications on the right devices",
        arguments: TestDatabase.available)
    func twoDevices(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.richardAndBob(server)
            try await NewDeviceRequestTests.addDevice(server, richard, name: "My S9")
            // Bob's next call processes the device announcement, which makes the S9 visible to him.
            _ = try await server.messages(bob)
            #expect(try await Self.buddyDevices(server, bob) == ["Richard's iPhone": false, "My S9": false])

            let steps: [(device: String, connected: Bool, expected: [String: Bool])] = [
                ("Richard's iPhone", true, ["Richard's iPhone": true, "My S9": false]),
                ("My S9", true, ["Richard's iPhone": true, "My S9": true]),
                ("My S9", false, ["Richard's iPhone": true, "My S9": false]),
                ("Richard's iPhone", false, ["Richard's iPhone": false, "My S9": false]),
            ]
            for step in steps {
                let posted = try await Self.postVPNStatus(server, richard, device: step.device, step.connected)
                #expect(posted.status == 204, "\(posted.text)")
                #expect(try await Self.ownDevices(server, richard) == step.expected)
                let seenByBob = try await Self.buddyDevices(server, bob)
                #expect(seenByBob == step.expected, "\(step.device) \(step.connected)")
                let latest = try await Self.vpnMessages(server, bob).first
                #expect(latest?["message"] as? String == "User \(step.connected ? "connected" : "disconnected") VPN on device '\(step.device)'")
            }
            #expect(try await Self.vpnMessages(server, bob).count == 4)
        }
    }

    /// The attack on "announce a change once": many reports of the same change at once. The flag flips in one
    /// conditional UPDATE, so exactly one of them announces it.
    @Test(arguments: TestDatabase.available)
    func racingReportsOfOneChangeAnnounceItOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.richardAndBob(server)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await Self.postVPNStatus(server, richard, device: "Richard's iPhone", true).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 204 }, "\(statuses)")
            #expect(try await Self.vpnMessages(server, bob).count == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func badReportsAreRefusedWithYonaCodes(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let path = "\(user.path)/devices/\(deviceID)/vpnStatus/"
            let missing = try await server.request(.POST, path, headers: user.passwordHeader, json: [:])
            #expect(missing.status == 400 && missing.json["code"] as? String == "error.request.missing.property", "\(missing.text)")
            let wrongType = try await server.request(.POST, path, headers: user.passwordHeader, json: ["vpnConnected": "maybe"])
            #expect(wrongType.status == 400, "\(wrongType.text)")
            let extra = try await server.request(.POST, path, headers: user.passwordHeader, json: ["vpnConnected": true, "x": 1])
            #expect(extra.status == 400, "\(extra.text)")
            let noPassword = try await server.request(.POST, path, json: ["vpnConnected": true])
            #expect(noPassword.status == 400 || noPassword.status == 401, "\(noPassword.text)")
            let otherDevice = try await server.request(
                .POST, "\(user.path)/devices/\(UUID().uuidString.lowercased())/vpnStatus/", headers: user.passwordHeader,
                json: ["vpnConnected": true])
            #expect(otherDevice.status == 404 && otherDevice.json["code"] as? String == "error.device.not.found.id", "\(otherDevice.text)")
        }
    }
}
