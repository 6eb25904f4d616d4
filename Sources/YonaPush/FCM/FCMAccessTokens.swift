import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import YonaDomain
import YonaObservability

/// OAuth2 access tokens for FCM from the service account (RS256 JWT grant). A token is cached until shortly
/// before it expires; one refresh is in flight at a time and every sender shares it.
package actor FCMAccessTokens {
    private struct Grant: JWTPayload {
        package let iss: IssuerClaim
        package let scope: String
        package let aud: AudienceClaim
        package let iat: IssuedAtClaim
        package let exp: ExpirationClaim
        package func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct TokenResponse: Decodable {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        package let access_token: String // OAuth's field names
        // swift-format-ignore: AlwaysUseLowerCamelCase
        package let expires_in: Int
    }

    package struct GrantFailed: Error {
        package let status: UInt
    }

    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    private let account: FCMServiceAccount
    private let client: HTTPClient
    private let keys: JWTKeyCollection
    private var cached: (token: String, expires: Date)?
    private var refreshing: Task<(String, Date), any Error>?
    /// Number of grants obtained (the `yona_fcm_oauth_refreshes_total` counter's source).
    private(set) var refreshes = 0

    private let metrics: YonaMetrics?

    package init(account: FCMServiceAccount, client: HTTPClient, metrics: YonaMetrics? = nil) async throws {
        self.account = account
        self.client = client
        self.metrics = metrics
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PrivateKey(pem: account.privateKey), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: account.privateKeyID))
        self.keys = keys
    }

    /// A valid access token, refreshed when missing or within a minute of expiry.
    package func token() async throws -> String {
        if let cached, cached.expires > Date().addingTimeInterval(60) { return cached.token }
        return try await refresh()
    }

    /// Forgets the cached token (after a bare 401) unless it was already replaced.
    package func invalidate(_ token: String) {
        if cached?.token == token { cached = nil }
    }

    private func refresh() async throws -> String {
        if let refreshing { return try await refreshing.value.0 }
        let task = Task { try await self.grant() }
        refreshing = task
        defer { refreshing = nil }
        let (token, expires) = try await task.value
        cached = (token, expires)
        refreshes += 1
        metrics?.oauthRefresh()
        return token
    }

    private func grant() async throws -> (String, Date) {
        let now = Date()
        let assertion = try await keys.sign(
            Grant(
                iss: .init(value: account.clientEmail), scope: Self.scope, aud: .init(value: [account.tokenURI]),
                iat: .init(value: now), exp: .init(value: now.addingTimeInterval(3600))), kid: JWKIdentifier(string: account.privateKeyID))
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else { throw GrantFailed(status: response.status.code) }
        let decoded = try JSONDecoder().decode(TokenResponse.self, from: Data(body.readableBytesView))
        return (decoded.access_token, now.addingTimeInterval(TimeInterval(decoded.expires_in)))
    }
}
