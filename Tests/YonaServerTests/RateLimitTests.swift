import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDomain
@testable import YonaServer

/// privacy.md "Abuse limits": per-client and per-number limits, in the database, behind trusted proxies.
@Suite struct RateLimitTests {
    /// Limits count in fixed windows; a test that straddled a window boundary would prove nothing, so it
    /// starts only when at least 40 s of the current window are left (waiting for the next one otherwise): under the
    /// whole suite's load on two cores, eight lookups once took more than 20 s.
    /// Call it inside `withServer`, so a slow server start on a loaded machine does not eat the margin.
    static func inOneWindow(of seconds: Int, _ body: () async throws -> Void) async throws {
        // An hour's window gets more: its bodies create several users (a key derivation each) under the full suite.
        let margin = seconds >= 3600 ? 180.0 : 40.0
        let now = Date().timeIntervalSince1970
        let left = Double(seconds) - now.truncatingRemainder(dividingBy: Double(seconds))
        if left < margin { try await Task.sleep(for: .seconds(left + 0.5)) }
        let window = Int(Date().timeIntervalSince1970) / seconds
        try await body()
        #expect(Int(Date().timeIntervalSince1970) / seconds == window, "the test outlasted its \(Int(margin)) s margin")
    }

    @Test(arguments: TestDatabase.available)
    func aFloodOfLookupsFromOneClientGets429(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.rateLimitPerClientPerMinute = 5 }) { server in
            try await Self.inOneWindow(of: 60) {
                var statuses: [Int] = []
                var last: APIResponse?
                for _ in 0..<8 {
                    let response = try await server.request(.GET, NewDeviceRequestTests.requestPath(randomMobileNumber()))
                    statuses.append(response.status)
                    last = response
                }
                #expect(statuses.prefix(5).allSatisfy { $0 == 400 }, "\(statuses)")
                #expect(statuses.suffix(3).allSatisfy { $0 == 429 }, "\(statuses)")
                #expect(last?.errorCode == "error.too.many.requests")
                let retryAfter = try #require(last?.headers.first(name: "Retry-After").flatMap(Int.init))
                #expect((1...60).contains(retryAfter))
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func oneNumberIsLimitedWhateverTheClient(db: TestDatabase) async throws {
        try await withServer(
            db,
            adjust: {
                $0.rateLimitPerNumberPerHour = 3
                $0.trustedProxies = [CIDR("127.0.0.0/8")!]
            }
        ) { server in
            try await Self.inOneWindow(of: 3600) {
                let number = randomMobileNumber()
                var statuses: [Int] = []
                for client in 0..<5 {
                    let response = try await server.request(
                        .GET, NewDeviceRequestTests.requestPath(number),
                        headers: [("X-Forwarded-For", "203.0.113.\(client)")])
                    statuses.append(response.status)
                }
                #expect(statuses == [400, 400, 400, 429, 429])
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func forwardedForCountsOnlyBehindTrustedProxies(db: TestDatabase) async throws {
        // Behind a trusted proxy every forwarded client has its own budget.
        try await withServer(
            db,
            adjust: {
                $0.rateLimitPerClientPerMinute = 2
                $0.trustedProxies = [CIDR("127.0.0.1/32")!]
            }
        ) { server in
            for client in 0..<4 {
                for _ in 0..<2 {
                    let response = try await server.request(
                        .GET, NewDeviceRequestTests.requestPath(randomMobileNumber()),
                        headers: [("X-Forwarded-For", "198.51.100.\(client), 127.0.0.1")])
                    #expect(response.status == 400)
                }
            }
        }
        // Without trust the header is ignored and all share the peer's budget.
        try await withServer(db, adjust: { $0.rateLimitPerClientPerMinute = 2 }) { server in
            try await Self.inOneWindow(of: 60) {
                var statuses: [Int] = []
                for client in 0..<4 {
                    let response = try await server.request(
                        .GET, NewDeviceRequestTests.requestPath(randomMobileNumber()),
                        headers: [("X-Forwarded-For", "198.51.100.\(client)")])
                    statuses.append(response.status)
                }
                #expect(statuses == [400, 400, 429, 429])
            }
        }
    }

    @Test func limitsHoldAcrossInstancesSharingOneDatabase() async throws {
        guard TestDatabase.available.contains(.postgres) else { return }
        try await withServer(.postgres, adjust: { $0.rateLimitPerClientPerMinute = 4 }) { first in
            try await Self.inOneWindow(of: 60) {
                let second = try await TestServer.start(.postgres, sharingDatabaseOf: first) { $0.rateLimitPerClientPerMinute = 4 }
                var statuses: [Int] = []
                for index in 0..<6 {
                    let server = index % 2 == 0 ? first : second
                    statuses.append(try await server.request(.GET, NewDeviceRequestTests.requestPath(randomMobileNumber())).status)
                }
                await second.stop()
                #expect(statuses == [400, 400, 400, 400, 429, 429])
            }
        }
    }

    /// issue 13, attack 11: one client is one bucket however its address is spelled, and an IPv6 client is its /64.
    @Test func clientBucketsAreCanonicalAndIPv6CountsPerPrefix() {
        #expect(ClientAddress.bucket("1.2.3.4") == ClientAddress.bucket("::ffff:1.2.3.4"))
        #expect(ClientAddress.bucket("2001:db8:0:1::1") == ClientAddress.bucket("2001:0db8:0000:0001:ffff:ffff:ffff:ffff"))
        #expect(ClientAddress.bucket("2001:db8:0:1::1") != ClientAddress.bucket("2001:db8:0:2::1"))
        #expect(ClientAddress.bucket("1.2.3.4") != ClientAddress.bucket("1.2.3.5"))
    }

    /// issue 13, attack 10: a counter's bucket is keyed with the server's secret, so a dump of the counters cannot be
    /// matched against the hashes of a list of numbers without it.
    @Test func bucketsAreKeyedWithTheServerSecret() throws {
        let one = try RecoveryKey(secret: Array(repeating: 1, count: 32)).rateLimitKey
        let other = try RecoveryKey(secret: Array(repeating: 2, count: 32)).rateLimitKey
        let number = "+31612345678"
        #expect(RateLimiter.bucket("number", number, key: one) == RateLimiter.bucket("number", number, key: one))
        #expect(RateLimiter.bucket("number", number, key: one) != RateLimiter.bucket("number", number, key: other))
        #expect(!RateLimiter.bucket("number", number, key: one).contains("612345678"))
    }

    @Test func cidrMatching() {
        let v4 = CIDR("10.1.0.0/16")!
        #expect(v4.contains(CIDR.parse("10.1.200.3")!))
        #expect(!v4.contains(CIDR.parse("10.2.0.1")!))
        #expect(v4.contains(CIDR.parse("::ffff:10.1.2.3")!))
        let v6 = CIDR("fd00::/8")!
        #expect(v6.contains(CIDR.parse("fd12::1")!))
        #expect(!v6.contains(CIDR.parse("fe80::1")!))
        #expect(CIDR("10.0.0.0/33") == nil)
        #expect(CIDR("nonsense") == nil)
        #expect(CIDR("192.168.1.7")?.prefixLength == 32)
    }
}
