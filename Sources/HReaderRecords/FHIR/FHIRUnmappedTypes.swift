/// FHIR R4 resource types without an entry mapping, and where each keeps what a timeline needs: its
/// "when" (date paths) and its "what" (label paths), as the FHIR specification names them. Kept as
/// data: to read another type, add a line. Types not listed fall back to the generic reading
/// (`code`/`title`/`description`/`category`, and the usual date elements).
///
/// One line per type, columns separated by spaces: the type, its date paths, its label paths; paths
/// within a column are separated by commas and tried in order (the first that gives something wins),
/// `-` for none. A path is dotted; on the way, an array gives its first item (`target.dueDate`,
/// `content.attachment.title`); choice types are spelled out (`effectiveDateTime`, `effectivePeriod`).
/// A date path may land on a date, dateTime or instant (the entry's date) or a Period (its start and
/// end); a label path on a CodeableConcept, a Coding, a Reference (its display) or a string.
let fhirUnmappedTypeTable = """
QuestionnaireResponse  authored                                                    questionnaire
MedicationDispense     whenHandedOver,whenPrepared                                 medicationCodeableConcept,medicationReference
MedicationAdministration effectiveDateTime,effectivePeriod                         medicationCodeableConcept,medicationReference
Specimen               collection.collectedDateTime,collection.collectedPeriod,receivedTime  type
Media                  createdDateTime,createdPeriod,issued                        content.title,modality,view,type
NutritionOrder         dateTime                                                    oralDiet.type,enteralFormula.baseFormulaType,enteralFormula.baseFormulaProductName,supplement.type,supplement.productName
Goal                   target.dueDate,startDate,statusDate                         description
DocumentReference      date,context.period                                         description,content.attachment.title,type,category
Device                 -                                                           deviceName.name,type,modelNumber
CarePlan               period,created                                              title,description,category
CareTeam               period                                                      name,category
Claim                  billablePeriod,created                                      item.productOrService,type
ExplanationOfBenefit   billablePeriod,created                                      item.productOrService,type
ServiceRequest         occurrenceDateTime,occurrencePeriod,authoredOn              code,category
FamilyMemberHistory    date                                                        condition.code,relationship,name
Composition            date                                                        title,type
Coverage               period                                                      type,class.name,payor
ImagingStudy           started                                                     description,procedureCode,modality
RiskAssessment         occurrenceDateTime,occurrencePeriod                         code,prediction.outcome,method
ClinicalImpression     effectiveDateTime,effectivePeriod,date                      code,description,summary
Communication          sent,received                                               topic,category,reasonCode
CommunicationRequest   occurrenceDateTime,occurrencePeriod,authoredOn              category,reasonCode
AdverseEvent           date,detected,recordedDate                                  event,category
DetectedIssue          identifiedDateTime,identifiedPeriod                         code,detail
Flag                   period                                                      code,category
List                   date                                                        title,code
EpisodeOfCare          period                                                      type
Consent                dateTime                                                    category,scope
DeviceRequest          occurrenceDateTime,occurrencePeriod,authoredOn              codeCodeableConcept,codeReference
DeviceUseStatement     timingDateTime,timingPeriod,recordedOn                      device,reasonCode
VisionPrescription     dateWritten,created                                         lensSpecification.product
SupplyRequest          occurrenceDateTime,occurrencePeriod,authoredOn              itemCodeableConcept,itemReference,category
SupplyDelivery         occurrenceDateTime,occurrencePeriod                         suppliedItem.itemCodeableConcept,suppliedItem.itemReference,type
Appointment            start                                                       serviceType,appointmentType,description,reasonCode
Basic                  created                                                     code
Task                   executionPeriod,authoredOn                                  code,description
ImmunizationRecommendation date                                                    recommendation.vaccineCode,recommendation.targetDisease
ImmunizationEvaluation date                                                        targetDisease,doseStatus
BodyStructure          -                                                           description,morphology,location
ChargeItem             occurrenceDateTime,occurrencePeriod,enteredDate             code
Invoice                date                                                        type
RequestGroup           authoredOn                                                  code
ResearchSubject        period                                                      study
MeasureReport          date,period                                                 measure
GuidanceResponse       occurrenceDateTime                                          moduleUri,moduleCanonical,moduleCodeableConcept
"""

/// One line of the table, read.
struct FHIRUnmappedType: Sendable {
    /// Each path split at its dots.
    var datePaths: [[String]]
    var labelPaths: [[String]]

    /// The table by type, parsed once.
    static let byType: [String: FHIRUnmappedType] = parse(fhirUnmappedTypeTable)

    static func parse(_ table: String) -> [String: FHIRUnmappedType] {
        var types: [String: FHIRUnmappedType] = [:]
        for line in table.split(separator: "\n") {
            let columns = line.split(whereSeparator: \.isWhitespace)
            guard columns.count == 3 else { preconditionFailure("fhirUnmappedTypeTable: bad line '\(line)'") }
            func paths(_ column: Substring) -> [[String]] {
                column == "-" ? [] : column.split(separator: ",").map { $0.split(separator: ".").map(String.init) }
            }
            types[String(columns[0])] = FHIRUnmappedType(datePaths: paths(columns[1]), labelPaths: paths(columns[2]))
        }
        return types
    }
}
