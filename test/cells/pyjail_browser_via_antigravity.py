# importing antigravity with BROWSER naming a command: webbrowser.open's result
import os, sys, webbrowser
os.environ['BROWSER'] = 'touch ran_browser'
webbrowser._tryorder = None
webbrowser._browsers = {}
sys.modules.pop('antigravity', None)
__import__('antigravity')  # its import opens a page
webbrowser.open('http://127.0.0.1:9/')
