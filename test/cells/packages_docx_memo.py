# a Word document written and read back by python-docx
import docx
d = docx.Document()
d.add_heading('Variance', 1)
d.add_paragraph('Sales over budget')
d.save('memo.docx')
[p.text for p in docx.Document('memo.docx').paragraphs]
