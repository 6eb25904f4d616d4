import Foundation
import Vapor
import YonaDomain
import YonaObservability
import YonaStore

/// `/admin/`: Yona's dashboard counts where they can be counted without joining the two sides, the sign-up gate,
/// and the delivery at a glance. Numbers only.
enum ConsoleDashboard {
    @Sendable static func page(req: Request) async throws -> Response {
        let figures = ConsoleFigures(db: req.store)
        let accounts = try await figures.accounts()
        let opened = try await figures.recency(of: \.$appLastOpenedDate)
        let monitored = try await figures.recency(of: \.$lastMonitoredActivityDate)
        let queues = try await figures.queues()
        // this process's last counts first, so a single instance shows the current minute too
        try await req.application.yona.metrics.recent.flush(on: req.store)
        let history = try await MinuteTallies.history(on: req.store)
        let gate = req.application.yona.config.signUp
        var warning: HTML = ""
        if let cap = gate.maxUsers, accounts.total > cap - SignUpGate.warningMargin(cap) {
            warning = "<p class=\"error\" role=\"alert\">Nearing the maximum number of users: \(accounts.total) of \(cap).</p>"
        }
        let now = Date()
        let queueRows = queues.map { queue -> HTML in
            let age = queue.oldest.map { Self.age(now.timeIntervalSince($0)) } ?? "–"
            return "<tr><th scope=\"row\">\(queue.name)</th><td class=\"n\">\(queue.depth)</td><td class=\"n\">\(age)</td></tr>"
        }
        return ConsolePage.render(
            req, title: "Dashboard",
            """
            \(warning)
            <h2>Accounts</h2>
            <table><tbody>
            <tr><th scope="row">Users</th><td class="n">\(accounts.total)</td></tr>
            <tr><th scope="row">Confirmed numbers</th><td class="n">\(accounts.confirmed)</td></tr>
            <tr><th scope="row">Unconfirmed numbers (free sign-up)</th><td class="n">\(accounts.unconfirmed)</td></tr>
            <tr><th scope="row">Invited by a buddy, not signed up</th><td class="n">\(accounts.invited)</td></tr>
            <tr><th scope="row">Maximum number of users</th><td class="n">\(gate.maxUsers.map(String.init) ?? "none")</td></tr>
            <tr><th scope="row">White-listed numbers</th><td class="n">\(accounts.whiteListed)</td></tr>
            <tr><th scope="row">White list enforced for</th><td>\(Self.gating(gate))</td></tr>
            </tbody></table>
            <h2>Devices</h2>
            <table><thead><tr><th scope="col">Last</th><th scope="col">Today</th><th scope="col">2–7 days</th>
            <th scope="col">8–30 days</th><th scope="col">Longer</th><th scope="col">Never</th></tr></thead><tbody>
            \(Self.recencyRow("App opened", opened))
            \(Self.recencyRow("Activity reported", monitored))
            </tbody></table>
            <h2>Delivery</h2>
            <table><thead><tr><th scope="col">Queue</th><th scope="col">Waiting</th><th scope="col">Oldest</th></tr></thead>
            <tbody>\(queueRows)</tbody></table>
            <h2>The last hour</h2>
            \(Self.charts(history))
            <p>Every instance's counts, per minute; the same and more as Prometheus metrics at <code>/metrics</code>.</p>
            """)
    }

    /// One chart per kind with any count in the hour: pushes, texts, mail, then the analyzer, each by outcome and cause.
    private static func charts(_ history: [String: [Int]]) -> HTML {
        let kinds = history.filter { $0.value.contains { $0 > 0 } }.keys.sorted { lhs, rhs in
            let order = ["pushes sent", "pushes", "texts", "mail", "analyzer", "goal"]
            let rank = { (name: String) in order.firstIndex { name.hasPrefix($0) } ?? order.count }
            return (rank(lhs), lhs) < (rank(rhs), rhs)
        }
        guard !kinds.isEmpty else { return "<p>Nothing was delivered or reported in the last hour.</p>" }
        return HTML.join(kinds.map { ConsoleChart.bars($0, history[$0] ?? []) })
    }

    private static func recencyRow(_ title: String, _ recency: ConsoleFigures.Recency) -> HTML {
        """
        <tr><th scope="row">\(title)</th><td class="n">\(recency.today)</td><td class="n">\(recency.lastWeek)</td>
        <td class="n">\(recency.lastMonth)</td><td class="n">\(recency.older)</td><td class="n">\(recency.never)</td></tr>
        """
    }

    private static func gating(_ gate: SignUpGate) -> String {
        switch (gate.whiteListFreeSignUp, gate.whiteListInvitedUsers) {
        case (true, true): "free sign-ups and invited users"
        case (true, false): "free sign-ups"
        case (false, true): "invited users"
        case (false, false): "nobody (sign-up is open)"
        }
    }

    static func age(_ seconds: TimeInterval) -> String {
        switch seconds {
        case ..<120: "\(Int(max(0, seconds))) s"
        case ..<7200: "\(Int(seconds / 60)) min"
        default: "\(Int(seconds / 3600)) h"
        }
    }
}
