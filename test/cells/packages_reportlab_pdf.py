# a PDF written by reportlab, its text read back by pypdf
from reportlab.pdfgen import canvas
import pypdf
c = canvas.Canvas('memo.pdf')
c.drawString(72, 720, 'Total variance -928,634 USD')
c.save()
pypdf.PdfReader('memo.pdf').pages[0].extract_text().strip()
