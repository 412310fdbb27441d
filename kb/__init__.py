"""kb: a bilingual (Chinese/English) FAQ knowledge base for LLM-training frameworks."""
