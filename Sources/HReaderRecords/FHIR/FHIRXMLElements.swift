/// What FHIR XML does not say and its JSON form needs: which elements repeat (a JSON array even
/// with one item), and which primitives are numbers or booleans rather than strings. The FHIR
/// definitions decide these; hreader carries the part of them that real records use, as lists of
/// element names. These lists decide: an element not listed is single (unless it occurs more than
/// once, which always makes an array) and a primitive not listed is a string. Paths are written from
/// the resource (`Encounter.type`, `Patient.contact.name`).
enum FHIRXMLElements {
    /// Complex elements that are 0..* wherever they appear in R4 (with the exceptions of `singleAt`).
    static let repeating: Set<String> = [
        "coding", "identifier", "name", "telecom", "address", "extension", "modifierExtension", "contained", "entry", "link",
        "category", "component", "interpretation", "referenceRange", "note", "performer", "reaction", "manifestation",
        "dosageInstruction", "dosage", "doseAndRate", "additionalInstruction", "issue", "section", "author", "participant",
        "reasonCode", "reasonReference", "bodySite", "contact", "communication", "generalPractitioner", "photo",
        "qualification", "basedOn", "partOf", "hasMember", "derivedFrom", "focus", "specimen", "result", "imagingStudy",
        "media", "presentedForm", "conclusionCode", "evidence", "stage", "diagnosis", "statusHistory", "classHistory",
        "episodeOfCare", "account", "protocolApplied", "education", "programEligibility", "item", "answer", "target",
        "activity", "goal", "addresses", "supportingInfo", "supportingInformation", "careTeam", "insurance", "procedure",
        "relatesTo", "content", "securityLabel", "payload", "series", "instance", "prediction", "appliesTo", "udiCarrier",
        "deviceName", "property", "version", "specialization", "safety", "recommendation", "serviceType",
        "specialty", "security", "tag", "relatedArtifact", "jurisdiction", "useContext", "topic", "event", "suspectEntity",
        "contributor", "modality", "procedureCode", "endpoint", "payor", "action", "relevantHistory", "input", "output",
        "parameter", "part", "group", "population", "stratifier", "characteristic", "member", "detectedIssue", "adjudication",
        "subDetail", "addItem", "processNote", "benefitBalance", "financial", "related", "nutrient", "texture",
        "fluidConsistencyType", "schedule", "supplement", "administration", "lensSpecification", "prism", "container",
        "processing", "availableTime", "notAvailable", "costToBeneficiary", "exception", "attester", "slot",
        "requestedPeriod", "policy", "verification", "replaces", "eventHistory", "finding", "problem", "recipient", "implicated",
        "contraindicatedVaccineCode", "forecastReason", "dateCriterion", "supportingImmunization",
    ]

    /// Paths where an element of `repeating` is single: whole (`Location.address`) or its last two
    /// names, wherever they are (`adjudication.category`, `contact.name`).
    static let singleAt: Set<String> = [
        "contact.name", "contact.address", "Location.address", "Observation.specimen", "Encounter.partOf", "Organization.partOf",
        "Location.partOf", "Media.content", "Media.modality", "Media.bodySite", "ImagingStudy.series.modality",
        "ImagingStudy.series.bodySite", "Communication.topic", "AdverseEvent.event",
        "Encounter.serviceType", "MedicationRequest.performer", "DeviceRequest.performer", "RiskAssessment.performer",
        "QuestionnaireResponse.author", "CarePlan.author", "Flag.author", "RequestGroup.author", "DetectedIssue.author",
        "MedicationAdministration.dosage", "Observation.bodySite", "Specimen.collection.bodySite", "DeviceUseStatement.bodySite",
        "Task.focus", "MedicationDispense.category", "MedicationStatement.category", "MedicationAdministration.category",
        "item.category", "supportingInfo.category", "benefitBalance.category", "adjudication.category", "total.category",
        "List.entry.item", "suspectEntity.instance", "SupplyRequest.category",
        "CareTeam.participant.member", "Claim.insurance.coverage", "ExplanationOfBenefit.insurance.coverage",
    ]

    /// Paths where a name that is single elsewhere repeats.
    static let repeatingAt: Set<String> = [
        "Encounter.type", "EpisodeOfCare.type", "Location.type", "Organization.type", "HealthcareService.type",
        "Encounter.participant.type", "Appointment.participant.type", "CareTeam.participant.role", "Coverage.class",
        "AllergyIntolerance.category", "PractitionerRole.code", "Consent.category", "Consent.provision.actor",
        "Consent.provision.provision", "Provenance.agent", "Provenance.agent.role", "Composition.event.code",
        "Encounter.location", "HealthcareService.location", "PractitionerRole.location", "ExplanationOfBenefit.total",
        "Claim.item.detail", "ExplanationOfBenefit.item.detail", "Account.coverage", "FamilyMemberHistory.condition",
        "Patient.contact.relationship", "RelatedPerson.relationship", "Condition.evidence.code", "Condition.evidence.detail",
        "NutritionOrder.oralDiet.type", "Immunization.protocolApplied.targetDisease", "ImmunizationRecommendation.recommendation.vaccineCode",
    ]

    /// Primitive elements that are 0..*.
    static let repeatingPrimitives: Set<String> = [
        "given", "prefix", "suffix", "line", "profile", "instantiatesCanonical", "instantiatesUri", "event", "when",
        "dayOfWeek", "daysOfWeek", "timeOfDay", "careTeamSequence", "diagnosisSequence", "procedureSequence",
        "informationSequence", "itemSequence", "noteNumber", "targetProfile", "format", "alias",
    ]

    /// Whether an element becomes an array. `siblings` are the names of the elements beside it, to
    /// tell a Reference (whose `identifier` is single) from a resource (whose identifiers repeat).
    static func repeats(_ name: String, path: String, primitive: Bool, siblings: Set<String>) -> Bool {
        if repeatingAt.contains(path) { return true }
        if singleAt.contains(path) || singleAt.contains(path.split(separator: ".").suffix(2).joined(separator: ".")) { return false }
        if primitive { return repeatingPrimitives.contains(name) }
        if name == "identifier", siblings.isSubset(of: referenceElements) { return false }
        return repeating.contains(name)
    }

    /// The elements of a Reference.
    static let referenceElements: Set<String> = ["reference", "type", "identifier", "display", "extension"]

    // MARK: Primitive types

    /// Primitive elements whose type is decimal, integer, positiveInt or unsignedInt (and so a JSON
    /// number), by name, besides choice types ending so (`valueInteger`) and Quantity's `value`.
    static let numeric: Set<String> = [
        "rank", "sequence", "frequency", "frequencyMax", "period", "periodMax", "duration", "durationMax", "count", "countMax",
        "offset", "numberOfSeries", "numberOfInstances", "number", "size", "total", "score", "factor", "latitude",
        "longitude", "altitude", "numberOfRepeatsAllowed", "lowerLimit", "upperLimit", "dimensions", "careTeamSequence",
        "diagnosisSequence", "procedureSequence", "informationSequence", "itemSequence", "noteNumber", "relativeRisk",
        "sphere", "cylinder", "axis", "power", "add", "backCurve", "diameter", "amount", "minutesDuration", "frames", "width",
        "height", "order", "maxLength", "quantity", "min",
    ]

    /// Paths of numeric primitives whose name is a string elsewhere.
    static let numericAt: Set<String> = ["Appointment.priority"]

    /// Elements whose `value` is a decimal: Quantity (and its kinds: Age, Duration, Money, …), the
    /// ends of a Range or Ratio, and an adjudication.
    static let quantityElements: Set<String> = [
        "quantity", "low", "high", "numerator", "denominator", "origin", "maxDosePerAdministration", "maxDosePerLifetime",
        "daysSupply", "amount", "net", "unitPrice", "gross", "total", "balance", "capacity", "caloricDensity",
        "maxVolumeToDeliver", "adjudication", "length", "dailyAmount", "initialFill", "dispenseInterval",
    ]

    /// Boolean primitives, by name, besides choice types ending in `Boolean`.
    static let boolean: Set<String> = [
        "active", "preferred", "primary", "userSelected", "doNotPerform", "isSubpotent", "primarySource", "selected",
        "focal", "wasSubstituted", "experimental", "immutable", "required", "repeats", "readOnly", "mustSupport",
        "isModifier", "multipleAnd", "multipleOr", "inactive", "notGiven", "notPerformed", "excluded",
    ]

    private static let numericSuffixes = ["Integer", "Decimal", "PositiveInt", "UnsignedInt", "Integer64"]

    enum Kind { case string, number, boolean }

    /// The JSON type of a primitive element's value; `parent` is the name of the element holding it.
    static func kind(_ name: String, parent: String, path: String) -> Kind {
        if name == "value" {
            let isQuantity = quantityElements.contains(parent)
                || ["Quantity", "Age", "Duration", "Money", "Count", "Distance"].contains { parent.hasSuffix($0) }
            return isQuantity ? .number : .string
        }
        if boolean.contains(name) || hasTypeSuffix(name, "Boolean") { return .boolean }
        if numeric.contains(name) || numericAt.contains(path) || numericSuffixes.contains(where: { hasTypeSuffix(name, $0) }) {
            return .number
        }
        return .string
    }

    // MARK: Primitives without a value

    /// Primitive elements that may come with only an id or extensions (a data-absent-reason on a
    /// birth date): these become `_name` in JSON. Any other element without a `value` attribute is
    /// read as a complex element.
    static let primitiveNames: Set<String> = [
        "birthDate", "gender", "status", "intent", "date", "created", "issued", "authored", "authoredOn", "recorded",
        "recordedDate", "recordedOn", "start", "end", "family", "given", "prefix", "suffix", "text", "line", "city",
        "district", "state", "postalCode", "country", "use", "system", "value", "code", "display", "version", "unit",
        "comparator", "reference", "url", "title", "comment", "conclusion", "criticality", "lastOccurrence", "onset",
        "whenHandedOver", "whenPrepared", "started", "sent", "received", "dateTime", "dateAsserted", "active", "language",
        "implicitRules", "lastUpdated", "versionId", "contentType", "data", "hash", "size", "profile",
        "instantiatesCanonical", "instantiatesUri",
    ]

    private static let primitiveSuffixes = [
        "DateTime", "Date", "Instant", "Time", "String", "Boolean", "Integer", "Decimal", "Uri", "Url", "Canonical",
        "Markdown", "PositiveInt", "UnsignedInt", "Base64Binary", "Oid", "Uuid", "Integer64",
    ]

    static func isPrimitive(_ name: String) -> Bool {
        primitiveNames.contains(name) || primitiveSuffixes.contains { hasTypeSuffix(name, $0) }
    }

    /// `valueInteger` ends in the type `Integer`: a lower-case name followed by the type's name.
    private static func hasTypeSuffix(_ name: String, _ type: String) -> Bool {
        name.hasSuffix(type) && name.count > type.count && name.first?.isLowercase == true
    }
}
