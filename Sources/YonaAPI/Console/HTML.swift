import Foundation
import YonaDomain

/// A piece of HTML. Interpolated strings are escaped; only another `HTML` goes in as it is, so no text from a
/// request or the database can become markup.
package struct HTML: Sendable, ExpressibleByStringInterpolation {
    package let rendered: String

    package init(stringLiteral value: String) { rendered = value }

    package init(stringInterpolation: StringInterpolation) { rendered = stringInterpolation.output }

    private init(raw: String) { rendered = raw }

    package static func join(_ parts: [HTML]) -> HTML { HTML(raw: parts.map(\.rendered).joined()) }

    package struct StringInterpolation: StringInterpolationProtocol {
        var output = ""

        package init(literalCapacity: Int, interpolationCount: Int) { output.reserveCapacity(literalCapacity * 2) }
        package mutating func appendLiteral(_ literal: String) { output += literal }
        package mutating func appendInterpolation(_ text: String) { output += HTML.escape(text) }
        package mutating func appendInterpolation(_ number: Int) { output += String(number) }
        package mutating func appendInterpolation(_ html: HTML) { output += html.rendered }
        package mutating func appendInterpolation(_ parts: [HTML]) { output += parts.map(\.rendered).joined() }
    }

    /// Escapes the five characters that matter in text and in quoted attribute values.
    package static func escape(_ text: String) -> String { Markup.escaped(text) }
}
