package report

import "github.com/scalelab/scalelab/results"

// StudyPage is what the study page shows (package study builds it from
// the study file and the experiments' results; the report only draws).
type StudyPage struct {
	Title    string
	Question string
	Setup    string
	// Facts are the header's labelled values (profile, machine, versions,
	// where the results are).
	Facts [][2]string
	// Notes are said above the table (absolute times are not comparable,
	// the scale of the topologies, ...).
	Notes []string
	Rows  []StudyRow
}

// StudyRow is one finding of the study page.
type StudyRow struct {
	ID          string
	Finding     string
	Setup       string
	Source      string
	Published   string // the study's figures and their ratio
	About       string // the ratio or direction the finding is about
	Measured    string // scalelab's figures with 95 % CIs and run counts
	Verdict     string
	Reason      string
	Explanation string // for a disagreement: what the data says about it
	// Class is the verdict's colour (set by WriteStudy).
	Class string
}

// verdictClass maps a verdict to the status colours of the report.
func studyVerdictClass(v string) string {
	switch v {
	case "agrees":
		return "ok"
	case "disagrees":
		return "failed"
	case "not significant here":
		return "interrupted"
	}
	return "na"
}

var studyPage = newTemplate("study", `{{define "study"}}{{template "head" .Meta}}
<h1>{{.P.Title}}</h1>
<p>{{.P.Question}}</p>
<p class="mut small">{{.P.Setup}}</p>
<dl class="facts">{{range .P.Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
{{range .P.Notes}}<p class="note">{{.}}</p>{{end}}
<h2>Findings</h2>
<div class="scroll"><table><thead><tr><th class="l">finding</th><th class="l">setup</th><th class="l">published</th><th class="l">about</th><th class="l">scalelab</th><th class="l">verdict</th></tr></thead><tbody>
{{range .P.Rows}}<tr><td class="wrap">{{.Finding}}<br><span class="mut small">source: {{.Source}}</span></td><td class="wrap">{{.Setup}}</td><td class="wrap">{{.Published}}</td><td class="wrap">{{.About}}</td><td class="wrap mono">{{.Measured}}</td>
<td class="wrap"><span class="status {{.Class}}">{{.Verdict}}</span><br><span class="small">{{.Reason}}</span>{{with .Explanation}}<br><span class="small"><b>Why:</b> {{.}}</span>{{end}}</td></tr>
{{end}}</tbody></table></div>
{{template "foot" .Meta}}{{end}}`)

// WriteStudy writes the study page to path (atomically).
func WriteStudy(path string, p StudyPage) error {
	rows := make([]StudyRow, len(p.Rows))
	for i, r := range p.Rows {
		r.Class = studyVerdictClass(r.Verdict)
		rows[i] = r
	}
	p.Rows = rows
	b, err := render(studyPage, "study", struct {
		Meta pageMeta
		P    StudyPage
	}{newMeta(p.Title), p})
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(path, b)
}
