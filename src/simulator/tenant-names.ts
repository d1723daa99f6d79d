/** Name pools for the tenant generator: common names, some with diacritics and nickname pairs. */
export const FIRST_NAMES: readonly string[] = [
  'Robert', 'William', 'James', 'John', 'Michael', 'David', 'Richard', 'Joseph', 'Thomas', 'Charles',
  'Christopher', 'Daniel', 'Matthew', 'Anthony', 'Steven', 'Andrew', 'Joshua', 'Kenneth', 'Kevin', 'Brian',
  'Edward', 'Ronald', 'Timothy', 'Jason', 'Jeffrey', 'Benjamin', 'Samuel', 'Gregory', 'Alexander', 'Patrick',
  'Nicholas', 'Jonathan', 'Frederick', 'Lawrence', 'Theodore', 'Peter', 'Henry', 'Douglas', 'Zachary', 'Raymond',
  'Elizabeth', 'Jennifer', 'Margaret', 'Patricia', 'Susan', 'Jessica', 'Sarah', 'Karen', 'Nancy', 'Deborah',
  'Rebecca', 'Katherine', 'Christine', 'Samantha', 'Victoria', 'Abigail', 'Alexandra', 'Jacqueline', 'Kimberly', 'Stephanie',
  'Dorothy', 'Amanda', 'Melissa', 'Michelle', 'Emily', 'Laura', 'Olivia', 'Sophia', 'Isabella', 'Charlotte',
  'José', 'María', 'Zoë', 'Renée', 'François', 'Søren', 'Björn', 'Chloé', 'André', 'Inés',
  'Hiroshi', 'Yuki', 'Wei', 'Mei', 'Priya', 'Arjun', 'Fatima', 'Omar', 'Aisha', 'Mateo',
  'Lucía', 'Ana', 'Lars', 'Ingrid', 'Mohammed', 'Chen', 'Olga', 'Dmitri', 'Siobhán', 'Noah',
];

export const LAST_NAMES: readonly string[] = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
  'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
  'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts',
  'Gomez', 'Phillips', 'Evans', 'Turner', 'Diaz', 'Parker', 'Cruz', 'Edwards', 'Collins', 'Reyes',
  'Stewart', 'Morris', 'Morales', 'Murphy', 'Cook', 'Rogers', 'Gutierrez', 'Ortiz', 'Morgan', 'Cooper',
  'Peterson', 'Bailey', 'Reed', 'Kelly', 'Howard', 'Ramos', 'Kim', 'Cox', 'Ward', 'Richardson',
  'Watson', 'Brooks', 'Chavez', 'Wood', 'James', 'Bennett', 'Gray', 'Mendoza', 'Ruiz', 'Hughes',
  'Price', 'Alvarez', 'Castillo', 'Sanders', 'Patel', 'Myers', 'Long', 'Ross', 'Foster', 'Jimenez',
  'Müller', 'Schröder', 'Núñez', 'Peña', 'Gómez', 'Lefèvre', 'Dubois', 'Østergaard', 'Åberg', 'Kowalski',
  'Nowak', 'Novák', 'Horváth', 'Tanaka', 'Suzuki', 'Watanabe', 'Yamamoto', 'Wang', 'Zhang', 'Liu',
  'Singh', 'Kumar', 'Shah', 'Khan', 'Ali', 'Hassan', 'Ivanov', 'Petrov', 'Smirnov', 'Volkov',
  "O'Brien", 'McCarthy', 'Byrne', 'Ryan', 'Walsh', 'Fischer', 'Weber', 'Schneider', 'Becker', 'Hoffmann',
  'Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Silva', 'Santos', 'Oliveira', 'Costa', 'Pereira',
];

/** Nickname pairs (full, nick); used in both directions when planting duplicates. */
export const NICKNAMES: readonly [string, string][] = [
  ['Robert', 'Bob'], ['William', 'Bill'], ['James', 'Jim'], ['John', 'Jack'], ['Michael', 'Mike'],
  ['David', 'Dave'], ['Richard', 'Dick'], ['Joseph', 'Joe'], ['Thomas', 'Tom'], ['Charles', 'Chuck'],
  ['Christopher', 'Chris'], ['Daniel', 'Dan'], ['Matthew', 'Matt'], ['Anthony', 'Tony'], ['Steven', 'Steve'],
  ['Andrew', 'Andy'], ['Joshua', 'Josh'], ['Kenneth', 'Ken'], ['Edward', 'Ted'], ['Ronald', 'Ron'],
  ['Timothy', 'Tim'], ['Jeffrey', 'Jeff'], ['Benjamin', 'Ben'], ['Samuel', 'Sam'], ['Gregory', 'Greg'],
  ['Alexander', 'Alex'], ['Patrick', 'Pat'], ['Nicholas', 'Nick'], ['Jonathan', 'Jon'], ['Frederick', 'Fred'],
  ['Lawrence', 'Larry'], ['Theodore', 'Ted'], ['Peter', 'Pete'], ['Henry', 'Hank'], ['Douglas', 'Doug'],
  ['Zachary', 'Zach'], ['Raymond', 'Ray'], ['Elizabeth', 'Liz'], ['Jennifer', 'Jen'], ['Margaret', 'Peggy'],
  ['Patricia', 'Patty'], ['Susan', 'Sue'], ['Jessica', 'Jess'], ['Rebecca', 'Becky'], ['Katherine', 'Kate'],
  ['Christine', 'Chris'], ['Samantha', 'Sam'], ['Victoria', 'Vicky'], ['Abigail', 'Abby'], ['Alexandra', 'Alex'],
  ['Jacqueline', 'Jackie'], ['Kimberly', 'Kim'], ['Stephanie', 'Steph'], ['Dorothy', 'Dot'], ['Deborah', 'Debbie'],
];

export const DEPARTMENTS: readonly string[] = [
  'Engineering', 'Finance', 'Human Resources', 'Sales', 'Marketing', 'Legal', 'Operations', 'Support', 'IT', 'Research',
];

export const MACHINE_WORDS: readonly string[] = ['backup', 'build', 'deploy', 'monitor', 'etl', 'report', 'sync', 'batch', 'scanner', 'relay'];
