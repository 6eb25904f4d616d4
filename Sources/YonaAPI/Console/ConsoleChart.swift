import Foundation

/// A bar chart of one count per minute, drawn by the server as inline SVG (nothing loaded from elsewhere). The
/// figures are also in the chart's accessible name and in the table beside it.
enum ConsoleChart {
    static let barWidth = 6
    static let height = 60

    static func bars(_ title: String, _ values: [Int]) -> HTML {
        let peak = max(values.max() ?? 0, 1)
        let width = values.count * barWidth
        let rects = values.enumerated().compactMap { index, value -> HTML? in
            guard value > 0 else { return nil }
            let barHeight = max(1, value * height / peak)
            return "<rect x=\"\(index * barWidth)\" y=\"\(height - barHeight)\" width=\"\(barWidth - 1)\" height=\"\(barHeight)\"></rect>"
        }
        let total = values.reduce(0, +)
        let label = "\(title): \(total) in the last hour, at most \(values.max() ?? 0) in a minute"
        return """
            <figure><svg role="img" aria-label="\(label)" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            xmlns="http://www.w3.org/2000/svg"><title>\(label)</title><g fill="#24415e">\(rects)</g></svg>
            <figcaption>\(title): \(total) (peak \(values.max() ?? 0) a minute)</figcaption></figure>
            """
    }
}
