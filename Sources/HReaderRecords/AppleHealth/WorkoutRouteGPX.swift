import Foundation

/// A workout's route file from an Apple Health export (`workout-routes/route_….gpx`, GPX 1.1 as the
/// Health app writes it: `<trk><trkseg><trkpt lat lon><ele>…</ele><time>…</time>…</trkpt>`), read
/// as the summary hreader keeps (`RouteSummary`): the positions themselves are not kept. Track and
/// route points alike (`trkpt`, `rtept`), in document order. Read with libxml2's streaming reader
/// under `XMLPolicy`; a document type that declares anything is refused, as in every XML hreader
/// reads from others.
public enum WorkoutRouteGPX {
    /// The route of `data`; `name` says which file in messages. Throws `RecordsError.malformed` for
    /// bytes that are not a GPX document.
    public static func summary(_ data: Data, name: String) throws -> RouteSummary {
        let reader = try XMLTextReader(data, what: name)
        var route = RouteSummary()
        var sawRoot = false
        // The point being read (its position), and whether the text that follows is its `<ele>`.
        var point: (latitude: Double, longitude: Double, altitude: Double?)?
        var inElevation = false
        var pointDepth = 0
        func finishPoint() {
            if let p = point { route.add(latitude: p.latitude, longitude: p.longitude, altitude: p.altitude) }
            point = nil
        }
        while try reader.read() {
            switch reader.nodeType {
            case .documentType:
                if reader.documentTypeDeclaresAnything { throw RecordsError.malformed("\(name) declares a document type; a GPX file never does") }
            case .elementStart:
                guard reader.depth < XMLPolicy.maxDepth else {
                    throw RecordsError.malformed("\(name): elements nest more than \(XMLPolicy.maxDepth) deep; a GPX file never does")
                }
                let local = reader.localName
                if !sawRoot {
                    guard local == "gpx" else { throw RecordsError.malformed("\(name) is not a GPX file (its root is <\(local)>)") }
                    sawRoot = true
                    continue
                }
                if local == "trkpt" || local == "rtept" {
                    finishPoint()
                    var latitude: Double?, longitude: Double?
                    for attribute in reader.attributes() where attribute.namespaceURI == nil {
                        if attribute.localName == "lat" { latitude = Double(attribute.value.trimmingCharacters(in: .whitespaces)) }
                        if attribute.localName == "lon" { longitude = Double(attribute.value.trimmingCharacters(in: .whitespaces)) }
                    }
                    guard let latitude, let longitude else {
                        route.add(latitude: .nan, longitude: .nan, altitude: nil)   // counted as left out
                        continue
                    }
                    point = (latitude, longitude, nil)
                    pointDepth = reader.depth
                    if reader.isEmptyElement { finishPoint() }
                } else if local == "ele", point != nil, reader.depth == pointDepth + 1, !reader.isEmptyElement {
                    inElevation = true
                }
            case .text, .significantWhitespace, .whitespace:
                if inElevation, let value = Double(reader.value.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    point?.altitude = value
                }
            case .elementEnd:
                let local = reader.localName
                if local == "ele" { inElevation = false }
                if (local == "trkpt" || local == "rtept") && reader.depth == pointDepth { finishPoint() }
            default:
                break
            }
        }
        guard sawRoot else { throw RecordsError.malformed("\(name) is not a GPX file (no <gpx> element)") }
        finishPoint()
        return route
    }
}
