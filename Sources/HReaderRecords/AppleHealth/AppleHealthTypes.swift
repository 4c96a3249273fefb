/// HealthKit types → entries: the data table of DESIGN.md §7, kept as data. One line per type, tab
/// separated: HealthKit identifier, entry type, LOINC code (or -), description. To support another
/// type, add a line. Types not listed are kept as `observation` entries and counted.
let appleHealthTypeTable = """
HKQuantityTypeIdentifierHeartRate	vital_sign	8867-4	Heart rate
HKQuantityTypeIdentifierRestingHeartRate	vital_sign	40443-4	Resting heart rate
HKQuantityTypeIdentifierWalkingHeartRateAverage	vital_sign	-	Walking heart rate average
HKQuantityTypeIdentifierHeartRateVariabilitySDNN	vital_sign	80404-7	Heart rate variability (SDNN)
HKQuantityTypeIdentifierHeartRateVariabilityRMSSD	vital_sign	-	Heart rate variability (RMSSD)
HKQuantityTypeIdentifierBloodPressureSystolic	vital_sign	8480-6	Systolic blood pressure
HKQuantityTypeIdentifierBloodPressureDiastolic	vital_sign	8462-4	Diastolic blood pressure
HKCorrelationTypeIdentifierBloodPressure	vital_sign	85354-9	Blood pressure
HKQuantityTypeIdentifierBodyMass	vital_sign	29463-7	Body weight
HKQuantityTypeIdentifierHeight	vital_sign	8302-2	Body height
HKQuantityTypeIdentifierBodyMassIndex	vital_sign	39156-5	BMI
HKQuantityTypeIdentifierBodyTemperature	vital_sign	8310-5	Body temperature
HKQuantityTypeIdentifierOxygenSaturation	vital_sign	2708-6	Oxygen saturation
HKQuantityTypeIdentifierRespiratoryRate	vital_sign	9279-1	Respiratory rate
HKQuantityTypeIdentifierVO2Max	vital_sign	-	VO2 max
HKQuantityTypeIdentifierBloodGlucose	result	41653-7	Blood glucose
HKQuantityTypeIdentifierBodyFatPercentage	result	41982-0	Body fat percentage
HKQuantityTypeIdentifierLeanBodyMass	result	-	Lean body mass
HKQuantityTypeIdentifierStepCount	activity	55423-8	Step count
HKQuantityTypeIdentifierActiveEnergyBurned	activity	41981-2	Active energy burned
HKQuantityTypeIdentifierBasalEnergyBurned	activity	-	Resting energy burned
HKQuantityTypeIdentifierDietaryEnergyConsumed	activity	9052-2	Dietary energy
HKQuantityTypeIdentifierDietaryWater	activity	-	Water
HKQuantityTypeIdentifierDistanceWalkingRunning	activity	55430-3	Walking and running distance
HKQuantityTypeIdentifierDistanceCycling	activity	-	Cycling distance
HKQuantityTypeIdentifierFlightsClimbed	activity	-	Flights climbed
HKQuantityTypeIdentifierAppleExerciseTime	activity	55411-3	Exercise time
HKQuantityTypeIdentifierAppleStandTime	activity	-	Stand time
HKCategoryTypeIdentifierSleepAnalysis	activity	-	Sleep
HKCategoryTypeIdentifierMindfulSession	activity	-	Mindful session
HKCategoryTypeIdentifierAppleStandHour	activity	-	Stand hour
HKCategoryTypeIdentifierHeadache	symptom	-	Headache
HKCategoryTypeIdentifierFatigue	symptom	-	Fatigue
HKCategoryTypeIdentifierNausea	symptom	-	Nausea
HKCategoryTypeIdentifierCoughing	symptom	-	Coughing
HKCategoryTypeIdentifierFever	symptom	-	Fever
HKCategoryTypeIdentifierDizziness	symptom	-	Dizziness
HKCategoryTypeIdentifierShortnessOfBreath	symptom	-	Shortness of breath
HKCategoryTypeIdentifierChestTightnessOrPain	symptom	-	Chest tightness or pain
HKCategoryTypeIdentifierSoreThroat	symptom	-	Sore throat
HKCategoryTypeIdentifierAbdominalCramps	symptom	-	Abdominal cramps
HKCategoryTypeIdentifierMoodChanges	symptom	-	Mood changes
HKCategoryTypeIdentifierSleepChanges	symptom	-	Sleep changes
"""
