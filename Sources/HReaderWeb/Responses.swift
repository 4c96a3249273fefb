import Foundation
import HReaderJSON
import HReaderKit
import HTTPTypes
import Hummingbird
import NIOCore

enum JSONResponse {
    static func make(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        body(value.serialized(), contentType: "application/json; charset=utf-8", status: status)
    }

    /// JSON already written (by a `JSONByteWriter`).
    static func make(bytes: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: bytes))
    }

    /// For the shapes that `--json` prints too (`Patient.jsonObject`, `Entry.jsonObject`): keys sorted, as there.
    static func make(object: JSONObject, status: HTTPResponse.Status = .ok) -> Response {
        body(JSONValue.object(object).serialized(sortingKeys: true), contentType: "application/json; charset=utf-8", status: status)
    }

    static func body(_ text: String, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: buffer))
    }
}

enum HTMLResponse {
    static func make(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        JSONResponse.body(html, contentType: "text/html; charset=utf-8", status: status)
    }
}

/// The fields of an `application/x-www-form-urlencoded` body (what a plain HTML form posts); empty for
/// any other content type.
struct FormBody {
    let fields: [(String, String)]

    init(_ buffer: ByteBuffer, of request: Request) {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else { fields = []; return }
        fields = Self.parse(String(buffer: buffer))
    }

    static func parse(_ text: String) -> [(String, String)] {
        text.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String? { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? decode(parts[1]) ?? "" : "")
        }
    }

    func value(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }

    /// Percent-encodes a query component (everything but unreserved characters).
    static func encode(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
